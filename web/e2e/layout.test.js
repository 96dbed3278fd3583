// The board fits every screen: at five common window sizes the board is
// square, both clocks and the player's own back rank are on screen without
// scrolling, and the side panel sits beside the board or under it. The home
// page puts quick pairing first. Screenshots of each size are written to
// web/screenshots/ to be looked at.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, onlineGame, clickMove, square, waitForStatus, screenshot, assertNoPageErrors,
} from "./harness.js";

/** Window sizes (CSS pixels of page, below the browser's own bars) and where the side panel goes. */
const SIZES = [
  { width: 1366, height: 657, side: "beside" }, // a 1366×768 laptop in a normal window
  { width: 1280, height: 720, side: "beside" },
  { width: 1920, height: 1080, side: "beside" },
  { width: 768, height: 1024, side: "under" }, // a tablet held upright
  { width: 390, height: 844, side: "under", touch: true }, // a phone
];

const name = (size) => `${size.width}x${size.height}`;

/** Bounding boxes of what must be seen, measured in the page at scroll 0. */
async function measure(page, ownColor) {
  return page.evaluate((ownColor) => {
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height, right: r.right, bottom: r.bottom };
    };
    const rank = ownColor === "white" ? "1" : "8";
    const backRank = [..."abcdefgh"].map((f) => box(document.querySelector(`[data-square="${f}${rank}"]`)));
    return {
      viewport: { width: innerWidth, height: innerHeight },
      scrollWidth: document.documentElement.scrollWidth,
      board: box(document.querySelector("#board")),
      square: box(document.querySelector('[data-square="e4"]')),
      clocks: [...document.querySelectorAll(".player .clock")].map(box),
      backRank,
      side: box(document.querySelector(".side")),
    };
  }, ownColor);
}

describe("layout at five window sizes", () => {
  const suite = startServerAndBrowser();

  for (const size of SIZES) {
    test(`${name(size)}: a square board, both clocks and the own back rank on screen, side panel ${size.side}`, async () => {
      const { white, black } = await onlineGame(suite);
      await clickMove(white, "e2", "e4", [black]);
      await clickMove(black, "e7", "e5", [white]);
      await clickMove(white, "g1", "f3", [black]);
      const viewer = await newPlayer(suite, { viewport: { width: size.width, height: size.height }, touch: size.touch });
      await viewer.context().addCookies(await black.context().cookies());
      await viewer.goto(black.url());
      await waitForStatus(viewer, /^Your move \(black\)/);
      const m = await measure(viewer, "black");

      assert.ok(Math.abs(m.board.width - m.board.height) <= 1, `board ${m.board.width}×${m.board.height} is square`);
      assert.ok(Math.abs(m.square.width - m.square.height) <= 1, "squares are square");
      assert.ok(m.scrollWidth <= m.viewport.width, `no sideways scrolling (${m.scrollWidth} > ${m.viewport.width})`);
      assert.equal(m.clocks.length, 2);
      for (const clock of m.clocks) {
        assert.ok(clock.y >= 0 && clock.bottom <= m.viewport.height, `clock at y ${clock.y}–${clock.bottom} of ${m.viewport.height}`);
        assert.ok(clock.x >= 0 && clock.right <= m.viewport.width, `clock at x ${clock.x}–${clock.right}`);
      }
      for (const sq of m.backRank) {
        assert.ok(sq.bottom <= m.viewport.height && sq.right <= m.viewport.width, `own back rank square ends at ${sq.right},${sq.bottom}`);
      }
      if (size.side === "beside") {
        assert.ok(m.side.x >= m.board.right, "the side panel is right of the board");
        // The board uses the height it is given: no more than a tenth of the window is left unused.
        assert.ok(m.board.height >= 0.7 * m.viewport.height, `board ${m.board.height}px tall in ${m.viewport.height}`);
      } else {
        assert.ok(m.side.y >= m.board.bottom, "the side panel is under the board");
        assert.ok(m.board.width >= 0.9 * m.viewport.width, `board ${m.board.width}px wide in ${m.viewport.width}`);
      }
      await screenshot(viewer, `game-${name(size)}`);
      assertNoPageErrors(white, black, viewer);
    });
  }

  test("coordinates are printed on the edge squares and turn with the board", async () => {
    const page = await newPlayer(suite);
    const created = await page.evaluate(async () => {
      const res = await fetch("/api/games/local", {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ time_control: { kind: "correspondence" } }),
      });
      return res.json();
    });
    await page.goto(created.url);
    await square(page, "a1").waitFor();
    const printed = () => page.evaluate(() =>
      [...document.querySelectorAll("#coords .coord")].map((el) => `${el.dataset.of}:${el.textContent}`));
    const white = await printed();
    assert.equal(white.length, 16);
    assert.ok(white.includes("a1:1") && white.includes("a1:a") && white.includes("h1:h") && white.includes("a8:8"));
    await page.keyboard.press("f");
    const black = await printed();
    assert.ok(black.includes("h8:8") && black.includes("h8:h") && black.includes("a8:a") && black.includes("h1:1"));
    assert.ok(!black.includes("a1:a"), "the a-file letter moved with the board");
    assertNoPageErrors(page);
  });

  test("the home page shows quick pairing first, then the three ways to play, each with one primary button", async () => {
    for (const size of SIZES) {
      const page = await newPlayer(suite, { viewport: { width: size.width, height: size.height }, touch: size.touch });
      const order = await page.evaluate(() =>
        [...document.querySelectorAll("main section.card h2")].map((h) => h.textContent.replace(/\s+/g, " ").trim()));
      assert.deepEqual(order.slice(0, 4), ["Quick pairing", "Play a friend", "Play the computer", "Two players, one screen"]);
      for (const id of ["friend", "computer", "local"]) {
        assert.equal(await page.locator(`#${id} form .primary`).count(), 1, `one primary button in #${id}`);
      }
      assert.equal(await page.locator("#presets button").count(), 10);
      const quick = await page.locator("#quick").boundingBox();
      assert.ok(quick.y < size.height, "quick pairing is on the first screen");
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scrollWidth <= size.width, `no sideways scrolling on the home page at ${name(size)}`);
      await screenshot(page, `home-${name(size)}`);
      assertNoPageErrors(page);
      await page.context().close();
    }
  });
});
