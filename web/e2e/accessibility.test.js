// axe-core, a checker nobody here wrote, finds no violation on any page in
// any state worth checking.

import { describe, test } from "node:test";
import {
  startServerAndBrowser, newPlayer, onlineGame, localGame, clickMove, square, waitForStatus, assertAccessible,
  assertNoPageErrors,
} from "./harness.js";

describe("accessibility (axe-core)", () => {
  const suite = startServerAndBrowser();

  test("home page, with a seek in the lobby and a game in the lists", async () => {
    const page = await newPlayer(suite);
    await assertAccessible(page, "the home page");
    await page.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await page.locator("#presets").getByRole("button", { name: "3+2" }).click();
    await page.locator("#seeks").getByRole("button", { name: "Cancel" }).waitFor();
    await page.locator(".custom-seek summary").click();
    await assertAccessible(page, "the home page with an open seek");
    assertNoPageErrors(page);
  });

  test("game in progress, game over, and the promotion picker", async () => {
    const { white, black } = await onlineGame(suite);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "d7", "d5", [white]);
    await clickMove(white, "e4", "d5", [black]); // a capture to show
    await square(black, "g8").click(); // a selection with destinations
    await assertAccessible(black, "a game in progress");
    await white.getByRole("button", { name: "Offer draw" }).click();
    await black.locator("#offers").filter({ hasText: "offers a draw" }).waitFor();
    await assertAccessible(black, "a game with a draw offer");
    await black.getByRole("button", { name: "Resign" }).click();
    await assertAccessible(black, "the resign confirmation");
    await black.getByRole("button", { name: "Yes, resign" }).click();
    await waitForStatus(white, /wins by resignation/);
    await assertAccessible(white, "a finished game");

    const page = await newPlayer(suite);
    await localGame(page, { fen: "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1" });
    await square(page, "e7").click();
    await square(page, "e8").click();
    await page.locator("#promotion").waitFor();
    await assertAccessible(page, "the promotion picker");
    assertNoPageErrors(white, black, page);
  });

  test("account page signed out and signed in, and the how-to-play page", async () => {
    const page = await newPlayer(suite);
    await page.goto("/account.html");
    await page.locator("#signed-out").waitFor();
    await assertAccessible(page, "the account page (signed out)");
    const form = page.locator("#sign-up-form");
    await form.locator("input[name=username]").fill("Axel");
    await form.locator("input[name=password]").fill("a long enough password");
    await form.locator("button[type=submit]").click();
    await page.locator("#signed-in").waitFor();
    await assertAccessible(page, "the account page (signed in)");
    await page.goto("/how-to-play.html");
    await assertAccessible(page, "the how-to-play page");
    assertNoPageErrors(page);
  });

  test("a club's page and an arena's page, with its standings", async () => {
    const page = await newPlayer(suite);
    await page.evaluate(() =>
      fetch("/api/account/sign-up", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "Leader", password: "a long enough password" }),
      }),
    );
    await page.goto("/");
    await page.locator("#clubs-card").waitFor();
    await assertAccessible(page, "the home page signed in, with clubs and arenas");
    await page.locator("#clubs-card summary").click();
    await page.locator('#club-form [name="name"]').fill("Axe Club");
    await page.getByRole("button", { name: "Create the club" }).click();
    await page.waitForURL(/\/club\/axe-club$/);
    await page.locator("#club-me").filter({ hasText: "You lead" }).waitFor();
    await page.locator("#club-arena-create summary").click();
    await assertAccessible(page, "a club's page, as its leader");
    await page.getByRole("button", { name: "Create the arena" }).click();
    await page.waitForURL(/\/tournament\//);
    await page.getByRole("button", { name: "Join" }).click();
    await page.locator("#standings tr td").filter({ hasText: "Leader" }).waitFor();
    await assertAccessible(page, "an arena's page with a player");
    assertNoPageErrors(page);
  });
});
