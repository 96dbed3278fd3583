// Arenas in the browser: an organiser creates one from the home page's
// form; a teacher makes a class's club, pupils join it and its arena from
// the club page, are taken to their game as
// soon as the server pairs them, play it, and see the standings and, at
// the end, the podium; in the game, the berserk button and the arena's
// time left (docs/protocol.md, "Arenas"; docs/tournaments.md).

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

  test("pupils join the class's club and its arena, are taken to their game, and see the standings and the podium", async () => {
    const coach = await account(suite, "Teacher");
    // The teacher makes the class's club on the home page.
    await coach.goto("/");
    await coach.locator("#clubs-card summary").click();
    await coach.locator('#club-form [name="name"]').fill("Class 7B");
    await coach.locator('#club-form [name="admission"]').selectOption("open");
    await coach.getByRole("button", { name: "Create the club" }).click();
    await coach.waitForURL(/\/club\/class-7b$/);
    await coach.locator("#club-me").filter({ hasText: "You lead this club." }).waitFor();
    const created = await api(coach, "POST", "/api/arenas", {
      name: "Lesson", clockTime: 3, clockIncrement: 0, minutes: 20, waitMinutes: 0,
      "conditions.teamMember.teamId": "class-7b",
    });
    const arenaUrl = `/tournament/${created.id}`;
    const ann = await account(suite, "Ann");
    const ben = await account(suite, "Ben");
    const outsider = await account(suite, "Zed");
    await outsider.goto(arenaUrl);
    await outsider.getByRole("button", { name: "Join" }).click();
    await outsider.locator("#arena-notice").filter({ hasText: "members" }).waitFor();
    for (const pupil of [ann, ben]) {
      await pupil.goto("/club/class-7b");
      await pupil.getByRole("button", { name: "Join the club" }).click();
      await pupil.locator("#club-me").filter({ hasText: "You are a member." }).waitFor();
      await pupil.locator("#club-arenas a").filter({ hasText: "Lesson Arena" }).click();
      await pupil.waitForURL(new RegExp(`${arenaUrl}$`));
      await pupil.getByRole("button", { name: "Join" }).click();
    }
    // The director pairs them within a second or two; both pages go to the game.
    for (const pupil of [ann, ben]) await pupil.waitForURL(/\/game\//, { timeout: 20_000 });
    assert.equal(ann.url(), ben.url(), "the same game");
    const annIsWhite = (await ann.locator('.player[data-color="white"] .name').textContent()).includes("Ann");
    const [white, black] = annIsWhite ? [ann, ben] : [ben, ann];
    await waitForStatus(white, /Your move/);
    // The game page names the arena; White berserks before the first move.
    await white.locator("#tournament-link").filter({ hasText: "Lesson Arena" }).waitFor();
    assert.match(await white.locator("#tournament-left").textContent(), /left/);
    assert.equal(await white.getByRole("button", { name: "Abort" }).isHidden(), true, "arena games are played");
    await white.getByRole("button", { name: "Berserk" }).click();
    await black.locator('.player[data-color="white"] .berserked').waitFor();
    await white.getByRole("button", { name: "Berserk" }).waitFor({ state: "hidden" });
    assert.equal(await black.getByRole("button", { name: "Berserk" }).isVisible(), true, "Black may still");
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await white.getByRole("button", { name: "Resign" }).click();
    await white.getByRole("button", { name: "Yes, resign" }).click();
    await waitForStatus(black, /Black wins by resignation/);
    // Both stay in the arena from the game page and are taken to their next game.
    const firstGame = black.url();
    await black.waitForURL((url) => url.href !== firstGame && /\/game\//.test(url.href), { timeout: 20_000 });
    await white.waitForURL(black.url(), { timeout: 20_000 });

    // Back on the arena page, the winner leads with 2 points.
    await coach.goto(arenaUrl);
    const rows = coach.locator("#standings tr");
    await coach.waitForFunction(() => document.querySelector("#standings tr td.score")?.textContent.trim() === "2");
    const winner = annIsWhite ? "Ben" : "Ann";
    assert.match(await rows.nth(0).textContent(), new RegExp(`1\\s*${winner}[\\s\\S]*2`));
    assert.match(await rows.nth(1).textContent(), /0⚡/, "the loser's berserk is marked");
    await screenshot(coach, "arena-standings");

    coach.once("dialog", (dialog) => dialog.accept());
    await coach.getByRole("button", { name: "End the arena now" }).click();
    await coach.locator("#arena-podium-card").waitFor();
    assert.match(await coach.locator("#arena-podium li").first().textContent(), new RegExp(`${winner}\\s*2 points`));
    assert.equal(await coach.locator("#arena-phase").textContent(), "Finished");
    assertNoPageErrors(coach, ann, ben, outsider);
  });
});
