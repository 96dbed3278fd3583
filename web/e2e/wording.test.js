// What the pages say at the end of a game that never started, and the
// wording a newcomer reads: game lists, hints for touch screens.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, onlineGame, newPlayer, clickMove, square, waitForStatus, screenshot,
  assertNoPageErrors,
} from "./harness.js";

describe("an aborted game", () => {
  // A short first-move deadline, so the server's abort is seen in seconds.
  const suite = startServerAndBrowser({ env: { FIRST_MOVE_DEADLINE_MS: "4000" } });

  test("a missed first move says why it ended and offers a new game, not a rematch", async () => {
    const { white, black } = await onlineGame(suite);
    const whiteName = await black.locator('.player[data-color="white"] .name').textContent();
    for (const page of [white, black]) {
      await waitForStatus(page, /^Game aborted$/);
      assert.equal(await page.locator("#result-reason").textContent(), `White (${whiteName}) did not make a first move in time.`);
      assert.equal(await page.getByRole("button", { name: "Rematch" }).count(), 0);
      await page.getByRole("link", { name: "New game" }).waitFor();
    }
    await screenshot(black, "game-aborted");
    await white.getByRole("link", { name: "New game" }).click();
    await white.waitForURL((u) => u.pathname === "/");
    assertNoPageErrors(white, black);
  });

  test("a player's abort is told to both sides as such", async () => {
    const { white, black } = await onlineGame(suite);
    await white.getByRole("button", { name: "Abort" }).click();
    await waitForStatus(white, /^Game aborted$/);
    await waitForStatus(black, /^Game aborted$/);
    assert.equal(await white.locator("#result-reason").textContent(), "You aborted it before both sides had made their first move.");
    assert.equal(await black.locator("#result-reason").textContent(), "Your opponent aborted it before both sides had made their first move.");
    assertNoPageErrors(white, black);
  });
});

describe("wording", () => {
  const suite = startServerAndBrowser();

  test("an untimed game against the computer is listed as having no clock, not as correspondence", async () => {
    const page = await newPlayer(suite);
    await page.locator("#computer-form select[name=tc]").selectOption("corr");
    await page.getByRole("button", { name: "Play the computer" }).click();
    await page.waitForURL(/\/local\//);
    await page.goto("/");
    const item = page.locator("#my-games li").first();
    await item.filter({ hasText: "No clock · computer" }).waitFor();
    assert.doesNotMatch(await item.textContent(), /Correspondence/);
    assertNoPageErrors(page);
  });

  test("on a phone the premove hint speaks of tapping, not of the Escape key", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await clickMove(white, "g1", "f3", [black]);
    // Black is on a touch screen now: a finger prepares a premove during White's turn.
    await clickMove(black, "b8", "c6", [white]);
    const phone = await newPlayer(suite, { touch: true, viewport: { width: 390, height: 844 } });
    await phone.context().addCookies(await black.context().cookies());
    await phone.goto(black.url());
    await waitForStatus(phone, /White to move/);
    await square(phone, "g8").tap();
    await square(phone, "f6").tap();
    await waitForStatus(phone, /premove g8–f6 ready \(tap an empty square to clear it\)$/);
    await square(phone, "a5").tap();
    await waitForStatus(phone, /^White to move$/);
    assertNoPageErrors(white, black, phone);
  });
});
