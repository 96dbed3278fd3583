// Accounts and rewards in the browser: signing up, in and out, changing the
// password, the errors a person sees, and the $1 a win between two accounts
// earns on the rewards view (docs/protocol.md, "Accounts" and "Rewards").

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, challenge, localGame, clickMove, waitForStatus, screenshot, assertNoPageErrors,
} from "./harness.js";

const PASSWORD = "correct horse battery";

/** Today's UTC day as the server writes it ("2026-11-29"). */
const utcDay = () => new Date().toISOString().slice(0, 10);

/** Opens the account page the way a person does: the header link. */
async function openAccountPage(page) {
  await page.locator("#account-link").click();
  await page.waitForURL(/\/account\.html$/);
  await page.locator("#account-loading").waitFor({ state: "hidden" });
}

async function fill(page, formId, fields) {
  for (const [name, value] of Object.entries(fields)) await page.locator(`#${formId} [name="${name}"]`).fill(value);
  await page.locator(`#${formId} button[type=submit]`).click();
}

const notice = (page) => page.locator("#account-notice");

async function expectNotice(page, pattern) {
  await notice(page).filter({ hasText: pattern }).waitFor();
  return notice(page).textContent();
}

/** Signs up on the account page and waits until the page shows the account. */
async function signUp(page, username, password = PASSWORD) {
  await openAccountPage(page);
  await fill(page, "sign-up-form", { username, password });
  await page.locator("#account-name").filter({ hasText: username }).waitFor();
}

describe("account page", () => {
  const suite = startServerAndBrowser();

  test("signing up shows the username on the page and in every header; rule breaks and taken names say why", async () => {
    const alice = await newPlayer(suite);
    assert.equal(await alice.locator("#account-link").textContent(), "Sign in");
    assert.match(await alice.locator("#me").textContent(), /^You are .+ \(guest\)$/);
    await openAccountPage(alice);

    await fill(alice, "sign-up-form", { username: "Alice", password: "short" });
    assert.equal(await expectNotice(alice, /password/), "A password needs at least 8 characters, this one has 5.");
    await fill(alice, "sign-up-form", { username: "_alice", password: PASSWORD });
    assert.equal(await expectNotice(alice, /username/), "A username must start with a letter or a digit.");

    await fill(alice, "sign-up-form", { username: "Alice", password: PASSWORD });
    await alice.locator("#account-name").filter({ hasText: "Alice" }).waitFor();
    assert.equal(await alice.locator("#account-link").textContent(), "Alice");
    assert.equal(await alice.locator("#signed-out").isHidden(), true);
    // A new account starts at the provisional 1500 in every speed, and links to its page.
    await alice.locator("#account-ratings li").nth(4).waitFor();
    assert.deepEqual(
      (await alice.locator("#account-ratings li").allTextContents()).map((t) => t.replace(/\s+/g, " ").trim()),
      ["Bullet", "Blitz", "Rapid", "Classical", "Correspondence"].map((speed) => `${speed} 1500? (0 rated games)`),
    );
    assert.equal(await alice.locator("#profile-link").getAttribute("href"), "/@/Alice");
    assert.equal(await alice.locator("#password-change").isVisible(), true, "a local account may change its password");

    await alice.goto("/");
    await alice.locator("#me").filter({ hasText: "You are Alice" }).waitFor();
    assert.equal(await alice.locator("#me").textContent(), "You are Alice");
    assert.equal(await alice.locator("#account-link").textContent(), "Alice");
    await alice.goto("/how-to-play.html");
    await alice.locator("#account-link").filter({ hasText: "Alice" }).waitFor();
    await localGame(alice);
    await alice.locator("#account-link").filter({ hasText: "Alice" }).waitFor();

    // Names are unique whatever the letter case.
    const bob = await newPlayer(suite);
    await openAccountPage(bob);
    await fill(bob, "sign-up-form", { username: "ALICE", password: PASSWORD });
    assert.equal(
      await expectNotice(bob, /taken/),
      "This username is taken (letter case does not matter). Choose another one.",
    );
    assert.equal(await bob.locator("#account-link").textContent(), "Sign in");
    assertNoPageErrors(alice, bob);
  });

  test("a wrong password is refused; signing out and in again, and changing the password", async () => {
    const carol = await newPlayer(suite);
    await signUp(carol, "Carol");

    await carol.getByRole("button", { name: "Sign out" }).click();
    assert.equal(await expectNotice(carol, /Signed out/), "Signed out.");
    await carol.locator("#signed-out").waitFor();
    assert.equal(await carol.locator("#account-link").textContent(), "Sign in");
    await carol.goto("/");
    assert.match(await carol.locator("#me").filter({ hasText: "You are" }).textContent(), /\(guest\)$/);

    await openAccountPage(carol);
    await fill(carol, "sign-in-form", { username: "Carol", password: "not the password" });
    assert.equal(await expectNotice(carol, /Wrong/), "Wrong username or password.");
    assert.equal(await carol.locator("#signed-in").isHidden(), true);
    await screenshot(carol, "account-sign-in-error");

    await fill(carol, "sign-in-form", { username: "carol", password: PASSWORD }); // any letter case
    await carol.locator("#account-name").filter({ hasText: "Carol" }).waitFor();
    assert.equal(await notice(carol).isHidden(), true, "the old error is gone");
    assert.equal(await carol.locator("#account-link").textContent(), "Carol");

    await fill(carol, "password-form", { current: "not the password", new: "a new password" });
    assert.equal(await expectNotice(carol, /current/), "The current password is wrong.");
    await fill(carol, "password-form", { current: PASSWORD, new: "a new password" });
    await expectNotice(carol, /Password changed/);

    // The new password works and the old one no longer does.
    await carol.getByRole("button", { name: "Sign out" }).click();
    await carol.locator("#signed-out").waitFor();
    await fill(carol, "sign-in-form", { username: "Carol", password: PASSWORD });
    await expectNotice(carol, /Wrong/);
    await fill(carol, "sign-in-form", { username: "Carol", password: "a new password" });
    await carol.locator("#account-name").filter({ hasText: "Carol" }).waitFor();
    assertNoPageErrors(carol);
  });

  test("too many failed sign-ins say how long to wait", async () => {
    const mallory = await newPlayer(suite);
    await openAccountPage(mallory);
    // Five failures per username are answered as wrong credentials; the sixth is refused outright.
    for (let attempt = 1; attempt <= 5; attempt++) {
      await fill(mallory, "sign-in-form", { username: "nobody-here", password: `guess number ${attempt}` });
      await expectNotice(mallory, /Wrong username or password/);
      await mallory.evaluate(() => document.querySelector("#account-notice").setAttribute("hidden", ""));
    }
    await fill(mallory, "sign-in-form", { username: "nobody-here", password: "guess number 6" });
    assert.match(await expectNotice(mallory, /Too many/), /^Too many attempts\. Try again in 1[45] minutes\.$/);
    assertNoPageErrors(mallory);
  });
});

describe("rewards page", () => {
  // Its own server: sign-ups are limited per address per hour.
  const suite = startServerAndBrowser();

  test("a win between two accounts shows $1.00 credited to the winner today and nothing to the loser", async () => {
    const dave = await newPlayer(suite);
    const erin = await newPlayer(suite);
    await signUp(dave, "Dave");
    await signUp(erin, "Erin");
    for (const page of [dave, erin]) {
      assert.equal(await page.locator("#rewards-today").textContent(), `$0.00 of $5.00 today (UTC ${utcDay()})`);
      assert.match(await page.locator("#reward-entries").textContent(), /No rewards yet/);
    }

    // Fool's mate: Dave (White) is mated by Erin (Black).
    const { gameId } = await challenge(dave, erin, { kind: "correspondence" });
    await clickMove(dave, "f2", "f3", [erin]);
    await clickMove(erin, "e7", "e5", [dave]);
    await clickMove(dave, "g2", "g4", [erin]);
    await clickMove(erin, "d8", "h4", [dave]);
    for (const page of [dave, erin]) await waitForStatus(page, /^Black wins by checkmate$/);

    await openAccountPage(erin);
    await erin.locator("#reward-entries tr[data-status]").first().waitFor();
    assert.equal(await erin.locator("#rewards-today").textContent(), `$1.00 of $5.00 today (UTC ${utcDay()})`);
    const rows = erin.locator("#reward-entries tr[data-status]");
    assert.equal(await rows.count(), 1);
    const cells = await rows.first().locator("td").allTextContents();
    assert.equal(cells[1], "$1.00");
    assert.equal(cells[2], "Credited");
    assert.equal(await rows.first().getAttribute("data-status"), "credited");
    assert.equal(await rows.first().locator("a").getAttribute("href"), `/game/${gameId}`);
    assert.equal(await erin.locator("#rewards-bar").evaluate((el) => el.style.width), "20%");
    await screenshot(erin, "rewards");

    await openAccountPage(dave);
    assert.equal(await dave.locator("#rewards-today").textContent(), `$0.00 of $5.00 today (UTC ${utcDay()})`);
    assert.equal(await dave.locator("#reward-entries tr[data-status]").count(), 0);
    assert.match(await dave.locator("#reward-entries").textContent(), /No rewards yet/);

    // The entry's link leads back to the game.
    await rows.first().locator("a").click();
    await waitForStatus(erin, /^Black wins by checkmate$/);
    assertNoPageErrors(dave, erin);
  });

  test("a win past the cap is listed at $0.00 with the reason, next to the paid ones", async () => {
    // Five real wins take minutes of moves; the server's answer is stood in for, the page's reading of it is tested.
    const frank = await newPlayer(suite);
    await signUp(frank, "Frank");
    const day = utcDay();
    const at = Date.parse(`${day}T12:00:00Z`);
    const entry = (n, status) => ({
      game_id: `0000000${n}-0000-4000-8000-000000000000`, amount_cents: status === "credited" ? 100 : 0, day, status,
      created_at: at + n * 60_000,
    });
    const rewards = {
      day, total_cents: 500, cap_cents: 500,
      entries: [entry(6, "over_cap"), ...[5, 4, 3, 2, 1].map((n) => entry(n, "credited"))],
    };
    await frank.route("**/api/account/rewards", (route) => route.fulfill({ json: rewards }));
    await frank.reload();
    await frank.locator("#account-name").filter({ hasText: "Frank" }).waitFor();

    assert.equal(await frank.locator("#rewards-today").textContent(), `$5.00 of $5.00 today (UTC ${day})`);
    assert.equal(await frank.locator("#rewards-bar").evaluate((el) => el.style.width), "100%");
    const rows = frank.locator("#reward-entries tr[data-status]");
    assert.deepEqual(
      (await rows.first().locator("td").allTextContents()).slice(0, 3),
      ["Game 00000006", "$0.00", `Not paid: over the cap ($5.00 already paid on ${day}, UTC)`],
    );
    assert.equal(await frank.locator('#reward-entries tr[data-status="credited"]').count(), 5);
    assert.equal(
      await rows.first().locator("time").getAttribute("datetime"),
      new Date(at + 6 * 60_000).toISOString(),
    );
    await screenshot(frank, "rewards-over-cap");
    assertNoPageErrors(frank);
  });
});
