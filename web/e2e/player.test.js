// A player's page and the home page's "Your move" list in the browser: the
// record and archive of games played through the board, paged and filtered,
// each entry opening the game; and an opponent's move in a correspondence
// game reaching the home page (list, tab title, notification) through the
// lobby socket (docs/protocol.md, "A player's archive" and "Lobby socket").

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, challenge, clickMove, waitForStatus, api, untimed, assertNoPageErrors, screenshot,
} from "./harness.js";

async function account(suite, username) {
  const page = await newPlayer(suite);
  await api(page, "POST", "/api/account/sign-up", { username, password: "correct horse battery" });
  return page;
}

/** Fool's mate on the board: black wins. */
async function foolsMate(white, black) {
  await challenge(white, black, untimed);
  await clickMove(white, "f2", "f3");
  await clickMove(black, "e7", "e5");
  await clickMove(white, "g2", "g4");
  await clickMove(black, "d8", "h4");
  await waitForStatus(white, /checkmate/i);
}

describe("player page", () => {
  const suite = startServerAndBrowser();

  test("the record, pages of the archive, a filter, and an entry that opens the game", async () => {
    const alice = await account(suite, "Alice");
    const bob = await account(suite, "Bob");
    await foolsMate(alice, bob); // Alice loses
    await foolsMate(bob, alice); // Alice wins
    await foolsMate(alice, bob); // Alice loses

    await alice.goto("/@/alice?per_page=2");
    await alice.locator("#player-name").filter({ hasText: "Alice" }).waitFor();
    assert.equal(await alice.title(), "Alice · Chess");
    assert.equal(await alice.locator("#count-games").textContent(), "3");
    assert.equal(await alice.locator("#count-wins").textContent(), "1");
    assert.equal(await alice.locator("#count-losses").textContent(), "2");
    assert.equal(await alice.locator("#ratings").isHidden(), true, "casual games only: no speed with a rated game to show");

    const entries = alice.locator("#archive .archive-entry");
    await entries.nth(1).waitFor();
    assert.equal(await entries.count(), 2);
    assert.match(await entries.nth(0).textContent(), /Lost as white[\s\S]*vs Bob/);
    assert.match(await entries.nth(1).textContent(), /Won as black/);
    await alice.locator("#archive-more").click();
    await entries.nth(2).waitFor();
    assert.equal(await entries.count(), 3);
    assert.equal(await alice.locator("#archive-more").isHidden(), true, "the last page");
    await screenshot(alice, "player-page");

    await alice.locator('#archive-filter [name="result"]').selectOption("win");
    await alice.locator("#archive-filter button[type=submit]").click();
    await alice.waitForFunction(() => document.querySelectorAll("#archive .archive-entry").length === 1);
    assert.match(await entries.nth(0).textContent(), /Won as black/);

    const href = await entries.nth(0).locator("a.review").getAttribute("href");
    await entries.nth(0).locator("a.review").click();
    await alice.waitForURL((url) => url.pathname === href);
    await waitForStatus(alice, /checkmate/i);

    await alice.goto("/@/nobody-here");
    assert.match(await alice.locator("h1").textContent(), /No such player/);
    assertNoPageErrors(alice, bob);
  });

  test("an opponent's move shows on the home page's Your move list, in the title and as a notification", async () => {
    const carol = await newPlayer(suite);
    const dave = await newPlayer(suite);
    await carol.context().grantPermissions(["notifications"], { origin: suite.server.url });
    const { url } = await challenge(carol, dave, untimed);
    await clickMove(carol, "e2", "e4");
    await carol.goto("/");
    // The lists have loaded: the game is Carol's, not her move.
    await carol.locator(`#my-games a[href="${url}"]`).waitFor();
    assert.match(await carol.locator("#your-move").textContent(), /No game is waiting/);
    assert.doesNotMatch(await carol.title(), /^\(\d+\)/);

    await clickMove(dave, "e7", "e5");
    await carol.locator("#your-move li.your-turn").waitFor({ timeout: 8_000 });
    assert.match(await carol.locator("#your-move").textContent(), /moved just now/);
    assert.match(await carol.title(), /^\(1\) /);
    await carol.waitForFunction(() => document.body.dataset.notified === "1");
    assertNoPageErrors(carol, dave);
  });
});
