// Sounds: silent until the person interacts with the page, then move,
// capture, check, low time and the end of the game; a mute switch the
// browser remembers. What was played is read from the page's sound log
// (headless chromium has no loudspeaker to listen to).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startServerAndBrowser, onlineGame, clickMove, waitForStatus, assertNoPageErrors } from "./harness.js";

/** The sounds a page asked for, as "name" when audible and "(name)" when silenced. */
const heard = (page) =>
  page.evaluate(() => window.__chess.sounds.log.map((s) => (s.audible ? s.name : `(${s.name})`)));

describe("sounds", () => {
  const suite = startServerAndBrowser();

  test("none before the person interacts; then moves, captures, checks and the end are heard", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    assert.deepEqual(await heard(black), ["(move)"], "Black has not touched the page yet");
    assert.deepEqual(await heard(white), ["move"], "White clicked to play");
    await clickMove(black, "f7", "f5", [white]);
    await clickMove(white, "e4", "f5", [black]);
    await clickMove(black, "g7", "g5", [white]);
    await clickMove(white, "d1", "h5", [black]); // mate
    await waitForStatus(black, /White wins by checkmate/);
    await black.waitForFunction(() => window.__chess.sounds.log.length === 6);
    assert.deepEqual(await heard(black), ["(move)", "move", "capture", "move", "check", "gameEnd"]);
    assertNoPageErrors(white, black);
  });

  test("the mute switch silences the page and is remembered after a reload", async () => {
    const { white, black } = await onlineGame(suite);
    const toggle = black.locator("#sound-toggle");
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-pressed"), "false");
    await black.reload();
    await waitForStatus(black, /White to move/);
    assert.equal(await black.locator("#sound-toggle").getAttribute("aria-pressed"), "false", "remembered");
    await black.locator("body").click({ position: { x: 5, y: 5 } }); // an interaction: only the switch keeps it silent
    await clickMove(white, "e2", "e4", [black]);
    assert.deepEqual(await heard(black), ["(move)"]);
    await black.locator("#sound-toggle").click();
    await clickMove(black, "e7", "e5", [white]);
    assert.deepEqual(await heard(black), ["(move)", "move"]);
    assertNoPageErrors(white, black);
  });

  test("a player's running clock in low time is heard once", async () => {
    // 15 s is low time from the start: White hears it once White's clock runs (both have moved).
    const { white, black } = await onlineGame(suite, { kind: "clock", initial_ms: 15_000, increment_ms: 0 });
    await clickMove(white, "e2", "e4", [black]);
    assert.ok(!(await heard(white)).includes("lowTime"), "no clock runs before both have moved");
    await clickMove(black, "e7", "e5", [white]);
    await white.waitForFunction(() => window.__chess.sounds.log.some((s) => s.name === "lowTime"));
    await white.waitForFunction(() => /^0:0[0-8]/.test(document.querySelector('.player[data-color="white"] .clock').textContent));
    assert.deepEqual((await heard(white)).filter((s) => s === "lowTime"), ["lowTime"]);
    assert.ok(!(await heard(black)).some((s) => s.includes("lowTime")), "the opponent's low time is not Black's alarm");
    assertNoPageErrors(white, black);
  });
});
