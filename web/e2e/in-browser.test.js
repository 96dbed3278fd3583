// Games that run in this browser (the WebAssembly rules and engine): against the
// computer at both levels, on one screen with a take-back and a promotion, kept
// across a reload, and handed to a signed-in player's archive once finished.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, api, clickMove, square, waitForMoves, waitForStatus, sanList, assertNoPageErrors,
} from "./harness.js";

async function startOnOneScreen(page) {
  await page.getByRole("button", { name: "Start a game on this screen" }).click();
  await page.waitForURL(/\/local\//);
  await waitForStatus(page, /White to move/);
}

/** A game against the computer at `level`, the person White, after their 1. e4 and its reply. */
async function againstComputerAfterE4(page, level = "1") {
  await page.locator(`#computer-form input[name=level][value="${level}"]`).check();
  await page.locator("#computer-form select[name=color]").selectOption("white");
  await page.getByRole("button", { name: "Play the computer" }).click();
  await page.waitForURL(/\/local\//);
  await waitForStatus(page, /Your move/);
  await clickMove(page, "e2", "e4");
  await waitForMoves(page, 2);
}

describe("games in the browser", () => {
  const suite = startServerAndBrowser();

  test("the computer answers at both levels, from the worker, and the game survives a reload", async () => {
    for (const level of ["1", "2"]) {
      const page = await newPlayer(suite);
      await againstComputerAfterE4(page, level);
      assert.match(await page.locator('.player[data-color="black"] .name').textContent(), new RegExp(`Computer \\(level ${level}\\)`));
      const moves = await sanList(page);
      await page.reload();
      await waitForStatus(page, /Your move/);
      assert.deepEqual(await sanList(page), moves, `level ${level}: the reload keeps the game`);
      // Nothing of it is on the server.
      const id = page.url().split("/").pop();
      const answer = await page.evaluate(async (id) => (await fetch(`/api/games/${id}`)).status, id);
      assert.equal(answer, 404);
      assertNoPageErrors(page);
    }
  });

  test("one screen: a take-back, then a promotion through the picker", async () => {
    const page = await newPlayer(suite);
    await page.goto("/");
    await startOnOneScreen(page);
    const line = [["h2", "h4"], ["g7", "g5"], ["h4", "g5"], ["h7", "h6"], ["g5", "h6"], ["f8", "g7"], ["h6", "g7"], ["a7", "a6"]];
    for (const [i, [from, to]] of line.entries()) {
      await clickMove(page, from, to);
      await waitForMoves(page, i + 1);
    }
    await page.getByRole("button", { name: "Take back" }).click();
    await waitForMoves(page, 7);
    assert.equal(await square(page, "a7").getAttribute("aria-label"), "a7, black pawn");
    await clickMove(page, "g8", "f6");
    await waitForMoves(page, 8);
    await square(page, "g7").click();
    await square(page, "h8").click();
    await page.locator("#promotion").getByRole("button", { name: "Promote to knight" }).click();
    await waitForMoves(page, 9);
    assert.equal((await sanList(page)).at(-1), "gxh8=N");
    assert.equal(await square(page, "h8").getAttribute("aria-label"), "h8, white knight");
    assertNoPageErrors(page);
  });

  test("a signed-in player's finished game against the computer reaches their archive", async () => {
    const page = await newPlayer(suite);
    await api(page, "POST", "/api/account/sign-up", { username: "Keeper", password: "correct horse battery" });
    await page.goto("/");
    await againstComputerAfterE4(page);
    await page.getByRole("button", { name: "Resign" }).click();
    await page.locator("#resign-yes").click();
    await waitForStatus(page, /Black wins by resignation/);
    const id = page.url().split("/").pop();
    let games = [];
    for (let i = 0; i < 50 && games.length === 0; i++) {
      games = (await api(page, "GET", "/api/players/keeper/games")).games;
      if (!games.length) await page.waitForTimeout(100);
    }
    assert.equal(games.length, 1);
    assert.equal(games[0].game_id, id);
    assert.deepEqual([games[0].result, games[0].reason], ["loss", "resignation"]);
    assert.equal(games[0].opponent.name, "Computer (level 1)");
    const pgn = await page.evaluate(async (id) => (await fetch(`/api/games/${id}/pgn`)).text(), id);
    assert.match(pgn, /\[White "Keeper"\][\s\S]*\[Black "Computer \(level 1\)"\]/);
    assertNoPageErrors(page);
  });
});
