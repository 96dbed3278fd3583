// One person at one screen: promotion, castling, keyboard, drag, touch and take-back.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, localGame, clickMove, dragMove, square, classesOf,
  waitForMoves, waitForStatus, sanList, screenshot, assertNoPageErrors,
} from "./harness.js";

describe("games on one screen", () => {
  const suite = startServerAndBrowser();

  test("two players on one screen, started from the home page", async () => {
    const page = await newPlayer(suite);
    await page.getByRole("button", { name: "Start a game on this screen" }).click();
    await page.waitForURL(/\/local\//);
    await waitForStatus(page, /White to move/);
    await clickMove(page, "e2", "e4");
    await waitForStatus(page, /Black to move/);
    await clickMove(page, "e7", "e5");
    await dragMove(page, "g1", "f3");
    await waitForMoves(page, 3);
    assert.deepEqual(await sanList(page), ["e4", "e5", "Nf3"]);
    await page.getByRole("button", { name: "Take back" }).click();
    await waitForMoves(page, 2);
    assert.equal(await square(page, "g1").getAttribute("aria-label"), "g1, white knight");
    assertNoPageErrors(page);
  });

  test("only pieces with a move respond; tapping again clears; another piece switches", async () => {
    const page = await newPlayer(suite);
    await localGame(page);
    await square(page, "a1").click(); // the rook cannot move
    assert.ok(!(await classesOf(page, "a1")).includes("selected"));
    await square(page, "b1").click();
    assert.ok((await classesOf(page, "b1")).includes("selected"));
    assert.ok((await classesOf(page, "c3")).includes("move-target"));
    await square(page, "g1").click();
    assert.ok((await classesOf(page, "g1")).includes("selected") && !(await classesOf(page, "b1")).includes("selected"));
    assert.ok(!(await classesOf(page, "c3")).includes("move-target"));
    await square(page, "g1").click();
    assert.ok(!(await classesOf(page, "g1")).includes("selected"));
    await square(page, "e2").click();
    await page.keyboard.press("Escape");
    assert.ok(!(await classesOf(page, "e2")).includes("selected"), "Escape clears the selection");
    assertNoPageErrors(page);
  });

  test("promotion through the four-piece picker; Escape cancels it", async () => {
    const page = await newPlayer(suite);
    await localGame(page, { fen: "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1" });
    await square(page, "e7").click();
    await square(page, "e8").click();
    const picker = page.locator("#promotion");
    await picker.waitFor();
    assert.equal(await picker.locator("[data-role]").count(), 4);
    await screenshot(page, "promotion-picker");
    await page.keyboard.press("Escape");
    await picker.waitFor({ state: "hidden" });
    assert.equal(await square(page, "e7").getAttribute("aria-label"), "e7, white pawn", "nothing was played");
    await square(page, "e7").click();
    await square(page, "e8").click();
    await picker.getByRole("button", { name: "Promote to knight" }).click();
    await waitForMoves(page, 1);
    assert.match((await sanList(page))[0], /^e8=N/);
    assert.equal(await square(page, "e8").getAttribute("aria-label"), "e8, white knight");
    assertNoPageErrors(page);
  });

  test("castling by moving the king two squares", async () => {
    const page = await newPlayer(suite);
    await localGame(page, { fen: "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1" });
    await clickMove(page, "e1", "g1");
    assert.equal(await square(page, "f1").getAttribute("aria-label"), "f1, white rook");
    assert.equal(await square(page, "h1").getAttribute("aria-label"), "h1, empty");
    await dragMove(page, "e8", "c8");
    await waitForMoves(page, 2);
    assert.deepEqual(await sanList(page), ["O-O", "O-O-O"]);
    assert.equal(await square(page, "d8").getAttribute("aria-label"), "d8, black rook");
    assertNoPageErrors(page);
  });

  test("keyboard-only play of a few moves", async () => {
    const page = await newPlayer(suite);
    await localGame(page);
    // Tab reaches the board on one square (e2 for White); arrows move, Enter selects and plays.
    await square(page, "e2").focus();
    await page.keyboard.press("Enter");
    assert.ok((await classesOf(page, "e2")).includes("selected"));
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    assert.equal(await page.evaluate(() => document.activeElement.dataset.square), "e4");
    await page.keyboard.press("Enter");
    await waitForMoves(page, 1);
    // Black: from e4 go up to e7, select, down to e5, play.
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Enter");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await waitForMoves(page, 2);
    // White: Nf3 = from e5 to g1 then f3.
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown");
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "g1, white knight");
    await page.keyboard.press("Enter");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("Enter");
    await waitForMoves(page, 3);
    assert.deepEqual(await sanList(page), ["e4", "e5", "Nf3"]);
    assertNoPageErrors(page);
  });

  test("the classic piece theme is remembered by the browser", async () => {
    const page = await newPlayer(suite);
    await localGame(page);
    const fill = () => page.locator('[data-square="e1"] .piece').evaluate((el) => getComputedStyle(el).color);
    const blue = await fill();
    await page.getByRole("button", { name: "Classic pieces" }).click();
    await page.reload();
    await page.locator('[data-square="e1"] .piece').waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "classic");
    assert.notEqual(await fill(), blue, "White's pieces are no longer blue");
    await page.getByRole("button", { name: "Blue and pink pieces" }).click();
    assert.equal(await fill(), blue);
    assertNoPageErrors(page);
  });

  test("touch: taps play moves on a phone-sized screen where the board fills the width", async () => {
    const page = await newPlayer(suite, { touch: true, viewport: { width: 390, height: 800 } });
    await localGame(page);
    const box = await page.locator("#board").boundingBox();
    assert.ok(box.width >= 370, `board is ${box.width}px wide on a 390px screen`);
    await square(page, "d2").tap();
    await square(page, "d4").tap();
    await waitForMoves(page, 1);
    await square(page, "d7").tap();
    await square(page, "d5").tap();
    await waitForMoves(page, 2);
    assert.deepEqual(await sanList(page), ["d4", "d5"]);
    await screenshot(page, "phone");
    assertNoPageErrors(page);
  });
});
