// Challenge links: the invitation page, and the challenger who waits on
// another page of the site and is taken to the game when the friend joins.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, api, waitForStatus, clickMove, assertAccessible, screenshot, assertNoPageErrors,
} from "./harness.js";

/** Waits until the page's lobby socket is open (the server can reach the page). */
async function lobbyOpen(page) {
  await page.waitForFunction(() => document.body.dataset.lobby === "open");
}

describe("challenge links", () => {
  const suite = startServerAndBrowser();

  test("the challenger who stays on the home page is taken to the game when the friend opens the link", async () => {
    const host = await newPlayer(suite);
    const friend = await newPlayer(suite);
    await host.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await host.locator("#friend-form select[name=tc]").selectOption("5+0");
    await host.locator("#friend-form select[name=color]").selectOption("white");
    await host.getByRole("button", { name: "Create a challenge link" }).click();
    await host.locator("#challenge").waitFor();
    const link = await host.locator("#challenge-url").inputValue();
    await host.getByRole("button", { name: "Copy link" }).click();

    await friend.goto(link);
    await host.waitForURL(new URL(link).pathname);
    await waitForStatus(host, /^Your move \(white\)/);
    await waitForStatus(friend, /^White to move/);
    await clickMove(host, "e2", "e4", [friend]);
    assertNoPageErrors(host, friend);
  });

  test("a challenger reading another page in a background tab is taken to the game and its title says so", async () => {
    const host = await newPlayer(suite);
    const friend = await newPlayer(suite);
    const created = await api(host, "POST", "/api/challenges", {
      time_control: { kind: "clock", initial_ms: 300_000, increment_ms: 0 }, color: "black",
    });
    // The tab is in the background from here on (as when the person switched tabs).
    await host.context().addInitScript(() => {
      Object.defineProperty(document, "hidden", { get: () => true });
      Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
    });
    await host.goto("/how-to-play.html");
    await lobbyOpen(host);

    await friend.goto(created.url);
    await host.waitForURL(new URL(created.url, suite.server.url).pathname);
    await waitForStatus(host, /^White to move/);
    await host.waitForFunction(() => document.title.startsWith("Your game started · "));
    assertNoPageErrors(host, friend);
  });

  test("the waiting page offers the invitation link and states the time control and colour", async () => {
    const host = await newPlayer(suite);
    const created = await api(host, "POST", "/api/challenges", {
      time_control: { kind: "clock", initial_ms: 300_000, increment_ms: 0 }, color: "white",
    });
    await host.goto(created.url);
    await waitForStatus(host, /Waiting for your friend/);
    assert.equal(await host.locator("#invite-terms").textContent(), "5+0 · you play White");
    assert.equal(await host.locator("#invite-url").inputValue(), new URL(created.url, suite.server.url).href);
    await host.getByRole("button", { name: "Copy invitation link" }).click();
    await host.locator("#notice").filter({ hasText: "Invitation link copied" }).waitFor();
    assert.equal(await host.evaluate(() => navigator.clipboard.readText()), new URL(created.url, suite.server.url).href);
    await assertAccessible(host, "the waiting page of a challenge");
    await screenshot(host, "challenge-waiting");
    assertNoPageErrors(host);
  });
});
