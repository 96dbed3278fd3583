// Arenas in the browser: an organiser creates one from the home page's
// form, pupils join from the tournament page, are taken to their game as
// soon as the server pairs them, play it, and see the standings and, at
// the end, the podium (docs/protocol.md, "Arenas"; docs/tournaments.md).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, api, clickMove, waitForStatus, assertNoPageErrors, screenshot,
} from "./harness.js";

async function account(suite, username) {
  const page = await newPlayer(suite);
  await api(page, "POST", "/api/account/sign-up", { username, password: "correct horse battery" });
  return page;
}

describe("arena", () => {
  const suite = startServerAndBrowser();

  test("the home page's form creates an arena with a countdown to its start", async () => {
    const coach = await account(suite, "Coach");
    await coach.goto("/");
    await coach.locator("#arena-create summary").click();
    await coach.locator('#arena-form [name="name"]').fill("Class of 7B");
    await coach.locator('#arena-form [name="clockTime"]').selectOption("5");
    await coach.locator('#arena-form [name="waitMinutes"]').selectOption("10");
    await coach.getByRole("button", { name: "Create the arena" }).click();
    await coach.waitForURL(/\/tournament\/[A-Za-z0-9]{8}$/);
    await coach.locator("#arena-name").filter({ hasText: "Class of 7B Arena" }).waitFor();
    assert.match(await coach.locator("#arena-terms").textContent(), /Rated · Blitz 5\+0 · 45 minutes · berserk allowed · by Coach/);
    assert.equal(await coach.locator("#arena-phase").textContent(), "Starts in");
    assert.match(await coach.locator("#arena-countdown").textContent(), /^(10:00|9:5\d)$/);
    assert.equal(await coach.locator("#arena-terminate").isVisible(), true, "the organiser may end it");

    const guest = await newPlayer(suite);
    await guest.goto(coach.url());
    await guest.locator("#arena-sign-in").waitFor();
    assert.equal(await guest.locator("#arena-join").isHidden(), true, "guests sign in first");
    await guest.goto("/");
    await guest.locator("#arenas .arena-item").filter({ hasText: "Class of 7B Arena" }).waitFor();
    assertNoPageErrors(coach, guest);
  });

  test("pupils join, are taken to their game, and see the standings and the podium", async () => {
    const coach = await account(suite, "Teacher");
    const created = await api(coach, "POST", "/api/arenas", {
      name: "Lesson", clockTime: 3, clockIncrement: 0, minutes: 20, waitMinutes: 0,
    });
    const arenaUrl = `/tournament/${created.id}`;
    const ann = await account(suite, "Ann");
    const ben = await account(suite, "Ben");
    for (const pupil of [ann, ben]) {
      await pupil.goto(arenaUrl);
      await pupil.getByRole("button", { name: "Join" }).click();
    }
    // The director pairs them within a second or two; both pages go to the game.
    for (const pupil of [ann, ben]) await pupil.waitForURL(/\/game\//, { timeout: 20_000 });
    assert.equal(ann.url(), ben.url(), "the same game");
    const annIsWhite = (await ann.locator('.player[data-color="white"] .name').textContent()).includes("Ann");
    const [white, black] = annIsWhite ? [ann, ben] : [ben, ann];
    await waitForStatus(white, /Your move/);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await white.getByRole("button", { name: "Resign" }).click();
    await white.getByRole("button", { name: "Yes, resign" }).click();
    await waitForStatus(black, /Black wins by resignation/);

    // Back on the arena page, the winner leads with 2 points.
    await coach.goto(arenaUrl);
    const rows = coach.locator("#standings tr");
    await coach.waitForFunction(() => document.querySelector("#standings tr td.score")?.textContent.trim() === "2");
    const winner = annIsWhite ? "Ben" : "Ann";
    assert.match(await rows.nth(0).textContent(), new RegExp(`1\\s*${winner}[\\s\\S]*2`));
    await screenshot(coach, "arena-standings");

    coach.once("dialog", (dialog) => dialog.accept());
    await coach.getByRole("button", { name: "End the arena now" }).click();
    await coach.locator("#arena-podium-card").waitFor();
    assert.match(await coach.locator("#arena-podium li").first().textContent(), new RegExp(`${winner}\\s*2 points`));
    assert.equal(await coach.locator("#arena-phase").textContent(), "Finished");
    assertNoPageErrors(coach, ann, ben);
  });
});
