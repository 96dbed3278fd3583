// Two people in two browser contexts play online games against the real server.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  startServerAndBrowser, onlineGame, newPlayer, clickMove, square, classesOf, waitForStatus,
  waitForMoves, sanList, screenshot, assertNoPageErrors, moveCount,
} from "./harness.js";

describe("online games between two browsers", () => {
  const suite = startServerAndBrowser();

  test("a fast mate is played to the end and shown plainly", async () => {
    const { white, black } = await onlineGame(suite);
    assert.match(await white.locator("#deadline").textContent(), /^White must make a first move within \d+ s/);
    await clickMove(white, "f2", "f3", [black]);
    await black.locator("#deadline").filter({ hasText: /^Black must make a first move/ }).waitFor();
    await clickMove(black, "e7", "e5", [white]);
    await white.locator("#deadline").waitFor({ state: "hidden" });
    await clickMove(white, "g2", "g4", [black]);
    await clickMove(black, "d8", "h4", [white]);
    for (const page of [white, black]) {
      await waitForStatus(page, /^Black wins by checkmate$/);
      assert.ok((await classesOf(page, "e1")).includes("check"), "the mated king is pink");
    }
    assert.deepEqual(await sanList(white), ["f3", "e5", "g4", "Qh4#"]);
    await screenshot(white, "game-finished");
    assertNoPageErrors(white, black);
  });

  test("a capture shows the green ring, then the last move in yellow", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "d7", "d5", [white]);
    await square(white, "e4").click();
    assert.ok((await classesOf(white, "d5")).includes("capture-target"), "ring on the capturable pawn");
    assert.ok((await classesOf(white, "e5")).includes("move-target"), "dot on the empty square");
    assert.ok(!(await classesOf(white, "d4")).includes("move-target"), "no dot where the pawn cannot go");
    await square(white, "d5").click();
    await waitForMoves(black, 3);
    for (const page of [white, black]) {
      assert.ok((await classesOf(page, "e4")).includes("last-move"));
      assert.ok((await classesOf(page, "d5")).includes("last-move"));
      assert.equal(await square(page, "d5").getAttribute("aria-label"), "d5, white pawn");
      assert.match(await page.locator('.player[data-color="white"] .captured').textContent(), /^Captured: pawn/);
    }
    assert.deepEqual(await sanList(black), ["e4", "d5", "exd5"]);
    assertNoPageErrors(white, black);
  });

  test("a premove is highlighted during the opponent's turn and played after their move", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "f7", "f6", [white]);
    await clickMove(white, "d1", "h5", [black]); // check
    assert.ok((await classesOf(black, "e8")).includes("check"));
    // White prepares Bc4 while Black thinks.
    await square(white, "f1").click();
    await square(white, "c4").click();
    await white.waitForFunction(() => document.querySelector('[data-square="c4"]').classList.contains("premove"));
    assert.ok((await classesOf(white, "f1")).includes("premove"));
    assert.ok((await classesOf(white, "e8")).includes("check"));
    await screenshot(white, "game-check-premove");
    await clickMove(black, "g7", "g6", [white]);
    await waitForMoves(white, 5);
    await waitForMoves(black, 5);
    assert.deepEqual(await sanList(black), ["e4", "f6", "Qh5+", "g6", "Bc4"]);
    assert.ok(!(await classesOf(white, "c4")).includes("premove"), "highlight gone once played");
    assertNoPageErrors(white, black);
  });

  test("a premove that became illegal is dropped and the page says so", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "d7", "d5", [white]);
    await clickMove(white, "b1", "c3", [black]);
    // Black is to move; White premoves exd5, then Black plays d4 instead, so d5 is empty.
    await square(white, "e4").click();
    await square(white, "d5").click();
    await white.waitForFunction(() => document.querySelector('[data-square="d5"]').classList.contains("premove"));
    await clickMove(black, "d5", "d4", [white]);
    await white.locator("#notice").filter({ hasText: /premove was dropped/ }).waitFor();
    assert.equal(await moveCount(white), 4);
    assertNoPageErrors(white, black);
  });

  test("Escape or a click elsewhere clears a prepared premove", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    const hasPremove = (sq) => white.evaluate((sq) => document.querySelector(`[data-square="${sq}"]`).classList.contains("premove"), sq);
    await square(white, "g1").click();
    await square(white, "f3").click();
    await white.waitForFunction(() => document.querySelector('[data-square="f3"]').classList.contains("premove"));
    await white.keyboard.press("Escape");
    assert.equal(await hasPremove("f3"), false);
    await square(white, "d1").click();
    await square(white, "h5").click();
    await white.waitForFunction(() => document.querySelector('[data-square="h5"]').classList.contains("premove"));
    await square(white, "a5").click(); // an empty square: clears it
    assert.equal(await hasPremove("h5"), false);
    await clickMove(black, "e7", "e5", [white]);
    await waitForStatus(white, /Your move/);
    assert.deepEqual(await sanList(white), ["e4", "e5"], "no cleared premove was played");
    assertNoPageErrors(white, black);
  });

  test("a draw offer accepted ends the game as a draw", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await white.getByRole("button", { name: "Offer draw" }).click();
    // The offer names the player who made it, as Black sees them.
    const whiteName = await black.locator('.player[data-color="white"] .name').textContent();
    await black.locator("#offers").filter({ hasText: `${whiteName} offers a draw.` }).waitFor();
    await white.locator("#offers").filter({ hasText: "You offered a draw." }).waitFor();
    await black.getByRole("button", { name: "Accept draw" }).click();
    for (const page of [white, black]) {
      await waitForStatus(page, /^Draw by agreement$/);
      assert.equal(await page.locator("#result-text").textContent(), "Draw by agreement");
      assert.equal(await page.locator("#result-score").textContent(), "½-½");
    }
    assertNoPageErrors(white, black);
  });

  test("resignation with a confirm, then a rematch swaps the colours", async () => {
    const { white, black, url } = await onlineGame(suite);
    await clickMove(white, "d2", "d4", [black]);
    await clickMove(black, "d7", "d5", [white]);
    await black.getByRole("button", { name: "Resign" }).click();
    await black.getByRole("button", { name: "No" }).click();
    assert.equal(await black.locator("#confirm-resign").isHidden(), true, "No keeps playing");
    await waitForStatus(black, /Black to move|White to move|Your move/);
    await black.getByRole("button", { name: "Resign" }).click();
    await black.getByRole("button", { name: "Yes, resign" }).click();
    for (const page of [white, black]) await waitForStatus(page, /^White wins by resignation$/);

    assert.equal(await white.locator("#new-game").isHidden(), true, "a played game offers a rematch, not a new game");
    await white.getByRole("button", { name: "Rematch" }).click();
    const whiteName = await black.locator('.player[data-color="white"] .name').textContent();
    await black.locator("#offers").filter({ hasText: `${whiteName} offers a rematch` }).waitFor();
    await black.getByRole("button", { name: "Accept rematch" }).click();
    await white.waitForURL((u) => u.pathname !== url);
    await black.waitForURL((u) => u.pathname !== url);
    assert.equal(new URL(white.url()).pathname, new URL(black.url()).pathname, "both in the same new game");
    await waitForStatus(black, /Your move \(white\)/);
    await waitForStatus(white, /White to move/);
    // The former Black now plays White from the bottom of the board.
    assert.equal(await black.locator("#board [data-square]").first().getAttribute("data-square"), "a8");
    assert.equal(await white.locator("#board [data-square]").first().getAttribute("data-square"), "h1");
    await clickMove(black, "e2", "e4", [white]);
    assertNoPageErrors(white, black);
  });

  test("a spectator with the shared link sees every move but cannot act", async () => {
    const { white, black, url } = await onlineGame(suite);
    const watcher = await newPlayer(suite);
    await watcher.goto(url);
    await waitForStatus(watcher, /White to move/);
    await clickMove(white, "e2", "e4", [black, watcher]);
    await clickMove(black, "e7", "e5", [white, watcher]);
    assert.deepEqual(await sanList(watcher), ["e4", "e5"]);
    assert.equal(await watcher.locator("#controls button:visible, #controls-play button:visible").count(), 0, "no game controls");
    await square(watcher, "g1").click();
    assert.ok(!(await classesOf(watcher, "g1")).includes("selected"), "pieces do not respond");
    assert.ok((await classesOf(watcher, "e5")).includes("last-move"));
    assertNoPageErrors(white, black, watcher);
  });

  test("clocks count down between updates, show tenths and low time, and a timeout ends the game", async () => {
    const { white, black } = await onlineGame(suite, { kind: "clock", initial_ms: 15_000, increment_ms: 0 });
    const whiteClock = black.locator('.player[data-color="white"] .clock');
    assert.equal(await whiteClock.textContent(), "0:15");
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]); // White's clock starts now
    await black.waitForFunction(() => {
      const el = document.querySelector('.player[data-color="white"] .clock');
      return /^0:0\d\.\d$/.test(el.textContent) && el.classList.contains("low") && el.classList.contains("running");
    });
    const blackClock = await black.locator('.player[data-color="black"] .clock').textContent();
    assert.equal(blackClock, "0:15", "the waiting clock does not move");
    for (const page of [white, black]) await waitForStatus(page, /^Black wins by time out$/);
    assert.equal(await whiteClock.textContent(), "0:00.0");
    assertNoPageErrors(white, black);
  });

  test("refresh mid-game returns to the same game and seat", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "c7", "c5", [white]);
    await white.reload();
    await waitForMoves(white, 2);
    await waitForStatus(white, /Your move \(white\)/);
    await clickMove(white, "g1", "f3", [black]);
    assert.deepEqual(await sanList(black), ["e4", "c5", "Nf3"]);
    assertNoPageErrors(white, black);
  });

  test("F flips the board, arrow keys review, and play resumes where it was", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await clickMove(white, "g1", "f3", [black]);
    const first = () => white.locator("#board [data-square]").first().getAttribute("data-square");
    assert.equal(await first(), "a8");
    await white.keyboard.press("f");
    assert.equal(await first(), "h1");
    await white.keyboard.press("F");
    assert.equal(await first(), "a8");

    await white.locator("body").click({ position: { x: 5, y: 5 } });
    await white.keyboard.press("ArrowLeft");
    await waitForStatus(white, /Reviewing move 2 of 3/);
    assert.equal(await square(white, "f3").getAttribute("aria-label"), "f3, empty");
    assert.equal(await square(white, "g1").getAttribute("aria-label"), "g1, white knight");
    await white.keyboard.press("ArrowLeft");
    await white.keyboard.press("ArrowLeft");
    assert.equal(await square(white, "e4").getAttribute("aria-label"), "e4, empty");
    await white.locator('#moves .move[data-ply="1"]').click();
    await waitForStatus(white, /Reviewing move 2 of 3/);
    assert.equal(await square(white, "e5").getAttribute("aria-label"), "e5, black pawn");
    // Black moves meanwhile; review stays until White returns to the game.
    await black.locator('[data-square="b8"]').click();
    await black.locator('[data-square="c6"]').click();
    await waitForMoves(white, 4);
    // It is White's move again, and reviewing does not hide it.
    await waitForStatus(white, /^Your move \(white\) · Reviewing move 2 of 4/);
    await white.keyboard.press("End");
    await waitForStatus(white, /Your move/);
    await clickMove(white, "f1", "b5", [black]);
    assertNoPageErrors(white, black);
  });

  test("the downloaded PGN has the moves of the game", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await clickMove(white, "g1", "f3", [black]);
    await clickMove(black, "b8", "c6", [white]);
    const [download] = await Promise.all([white.waitForEvent("download"), white.locator("#download-pgn").click()]);
    const pgn = readFileSync(await download.path(), "utf8");
    const moveText = pgn.replace(/\[[^\]]*\]/g, "").replace(/\{[^}]*\}/g, "").replace(/\s+/g, " ");
    assert.match(moveText, /1\. e4 (1\.\.\. )?e5 2\. Nf3 (2\.\.\. )?Nc6/);
    assert.match(pgn, /\[White "/);
    assertNoPageErrors(white, black);
  });
});
