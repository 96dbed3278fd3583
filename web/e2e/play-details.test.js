// Behaviours of play a player relies on without thinking about them: a
// premove does not survive a dropped connection (and the player is told),
// the clock keeps running while the promotion picker is open, and pieces
// can be dragged with a finger on a phone.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, onlineGame, newPlayer, localGame, clickMove, square, classesOf, waitForMoves,
  waitForStatus, sanList, blitz, assertNoPageErrors,
} from "./harness.js";

/** Drags a piece with one finger (touch events, as a phone sends them). */
async function touchDrag(page, from, to) {
  const a = await square(page, from).boundingBox();
  const b = await square(page, to).boundingBox();
  const cdp = await page.context().newCDPSession(page);
  const point = (box, dx = 0, dy = 0) => [{ x: box.x + box.width / 2 + dx, y: box.y + box.height / 2 + dy }];
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: point(a) });
  for (let i = 1; i <= 8; i++) {
    const t = i / 8;
    await cdp.send("Input.dispatchTouchEvent", {
      type: "touchMove",
      touchPoints: [{ x: a.x + a.width / 2 + (b.x - a.x) * t, y: a.y + a.height / 2 + (b.y - a.y) * t }],
    });
  }
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
  await cdp.detach();
}

describe("details of play", () => {
  const suite = startServerAndBrowser();

  test("a dropped connection clears the premove and says so; the opponent's move does not trigger it", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await clickMove(white, "g1", "f3", [black]);
    await clickMove(black, "b8", "c6", [white]);
    // White's turn: Black prepares Nf6.
    await square(black, "g8").click();
    await square(black, "f6").click();
    await black.waitForFunction(() => document.querySelector('[data-square="f6"]').classList.contains("premove"));
    await black.evaluate(() => window.__chess.socket.drop());
    await black.locator("#notice").filter({ hasText: "Your premove was cleared when the connection dropped." }).waitFor();
    assert.ok(!(await classesOf(black, "f6")).includes("premove"), "the highlight is gone at once");
    await black.waitForFunction(() => document.body.dataset.connection === "open");
    await clickMove(white, "f1", "c4", [black]);
    await waitForStatus(black, /^Your move \(black\)/);
    assert.deepEqual(await sanList(black), ["e4", "e5", "Nf3", "Nc6", "Bc4"], "the cleared premove was not played");
    assertNoPageErrors(white, black);
  });

  test("the player's clock keeps running while the promotion picker is open", async () => {
    const page = await newPlayer(suite);
    await localGame(page, { fen: "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", timeControl: blitz });
    await clickMove(page, "e1", "d1");
    await clickMove(page, "g7", "g6"); // both have moved: White's clock runs
    const clock = page.locator('.player[data-color="white"] .clock');
    await page.waitForFunction(() => document.querySelector('.player[data-color="white"] .clock').classList.contains("running"));
    await square(page, "e7").click();
    await square(page, "e8").click();
    await page.locator("#promotion").waitFor();
    const before = await clock.textContent();
    await page.waitForFunction((before) => document.querySelector('.player[data-color="white"] .clock').textContent !== before, before);
    assert.equal(await page.locator("#promotion").isVisible(), true, "the picker is still open");
    assert.ok((await clock.getAttribute("class")).includes("running"));
    await page.getByRole("button", { name: "Promote to queen" }).click();
    await waitForMoves(page, 3);
    assert.match((await sanList(page))[2], /^e8=Q/);
    assertNoPageErrors(page);
  });

  test("touch: a finger drags a piece on a phone-sized screen", async () => {
    const page = await newPlayer(suite, { touch: true, viewport: { width: 390, height: 844 } });
    await localGame(page);
    // A first touch selects the piece; dragging it then plays the move.
    await touchDrag(page, "g1", "f3");
    await waitForMoves(page, 1);
    await touchDrag(page, "b8", "c6");
    await waitForMoves(page, 2);
    assert.deepEqual(await sanList(page), ["Nf3", "Nc6"]);
    assert.equal(await square(page, "c6").getAttribute("aria-label"), "c6, black knight");
    assertNoPageErrors(page);
  });
});
