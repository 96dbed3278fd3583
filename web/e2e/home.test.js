// The home page: the lobby, a challenge link, and a game against the computer.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, newPlayer, clickMove, waitForMoves, waitForStatus, sanList,
  screenshot, assertNoPageErrors,
} from "./harness.js";

describe("home page", () => {
  const suite = startServerAndBrowser();

  test("a seek appears live in another browser's lobby; joining starts the game for both", async () => {
    const alice = await newPlayer(suite);
    const bob = await newPlayer(suite);
    await alice.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await bob.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await alice.getByText("Create a custom seek").click();
    await alice.locator("#seek-tc").selectOption("corr");
    await alice.getByRole("button", { name: "Create seek" }).click();
    await alice.locator("#seeks").getByRole("button", { name: "Cancel" }).waitFor();
    await bob.locator("#seeks").getByText("Correspondence").waitFor();
    // Cancel and create again: the other lobby follows without a reload.
    await alice.locator("#seeks").getByRole("button", { name: "Cancel" }).click();
    await bob.locator("#seeks").getByText("No open seeks yet.").waitFor();
    await alice.locator("#presets").getByRole("button", { name: "5+3" }).click();
    await bob.locator("#seeks").getByRole("button", { name: "Join" }).waitFor();
    await screenshot(bob, "home");
    await bob.locator("#seeks").getByRole("button", { name: "Join" }).click();
    await bob.waitForURL(/\/game\//);
    await alice.waitForURL(/\/game\//);
    assert.equal(new URL(alice.url()).pathname, new URL(bob.url()).pathname);
    await Promise.all([waitForStatus(alice, /to move|Your move/), waitForStatus(bob, /to move|Your move/)]);
    // Whoever is White moves first; the clocks are shown.
    const whitePage = (await alice.locator("#status").textContent()).includes("Your move") ? alice : bob;
    const other = whitePage === alice ? bob : alice;
    assert.equal(await whitePage.locator('.player[data-color="white"] .clock').textContent(), "5:00");
    await clickMove(whitePage, "e2", "e4", [other]);
    // Your games lists it; correspondence-first ordering is the server's.
    await other.goto("/");
    await other.locator("#my-games a").first().waitFor();
    assertNoPageErrors(alice, bob);
  });

  test("quick pairing: choosing the preset of an open seek joins it", async () => {
    const alice = await newPlayer(suite);
    const bob = await newPlayer(suite);
    await alice.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await alice.locator("#presets").getByRole("button", { name: "10+5" }).click();
    await bob.locator("#seeks").getByText("10+5").waitFor();
    await bob.locator("#presets").getByRole("button", { name: "10+5" }).click();
    await bob.waitForURL(/\/game\//);
    await alice.waitForURL(/\/game\//);
    assert.equal(new URL(alice.url()).pathname, new URL(bob.url()).pathname);
    assertNoPageErrors(alice, bob);
  });

  test("a challenge link gives the empty seat to the friend who opens it", async () => {
    const host = await newPlayer(suite);
    const friend = await newPlayer(suite);
    await host.locator("#friend-form select[name=color]").selectOption("white");
    await host.getByRole("button", { name: "Create a challenge link" }).click();
    await host.locator("#challenge").waitFor();
    const link = await host.locator("#challenge-url").inputValue();
    assert.match(link, /\/game\//);
    await host.getByRole("link", { name: "Go to the game" }).click();
    await waitForStatus(host, /Waiting for your friend/);
    await friend.goto(link);
    await waitForStatus(host, /Your move \(white\)/);
    await waitForStatus(friend, /White to move/);
    // The friend took Black's seat: Black's side is at the bottom of their board.
    await friend.waitForFunction(() => document.querySelector("#board [data-square]").dataset.square === "h1");
    await clickMove(host, "d2", "d4", [friend]);
    await clickMove(friend, "d7", "d5", [host]);
    assertNoPageErrors(host, friend);
  });

  test("the how-to-play page explains the rules, with the board's pieces", async () => {
    const page = await newPlayer(suite);
    await page.getByRole("link", { name: "How to play" }).click();
    await page.getByRole("heading", { name: "How to play chess" }).waitFor();
    for (const topic of ["Castling", "En passant", "Promotion", "Reading the move list"]) {
      await page.getByRole("heading", { name: topic }).waitFor();
    }
    assert.equal(await page.locator(".piece-row svg").count(), 6);
    assertNoPageErrors(page);
  });

  test("a game against the computer: it answers moves", async () => {
    const page = await newPlayer(suite);
    await page.locator("#computer-form select[name=color]").selectOption("white");
    await page.getByRole("button", { name: "Play the computer" }).click();
    await page.waitForURL(/\/local\//);
    await waitForStatus(page, /Your move/);
    await clickMove(page, "e2", "e4");
    await waitForMoves(page, 2); // the computer's reply
    await waitForStatus(page, /Your move/);
    await clickMove(page, "d2", "d4");
    await waitForMoves(page, 4);
    assert.equal((await sanList(page)).length, 4);
    assert.match(await page.locator('.player[data-color="black"] .name').textContent(), /Computer/);
    // Take back goes to your last turn: your move and the computer's answer are undone.
    await page.getByRole("button", { name: "Take back" }).click();
    await waitForMoves(page, 2);
    await waitForStatus(page, /Your move/);
    assert.equal(await page.locator('[data-square="d2"]').getAttribute("aria-label"), "d2, white pawn");
    assertNoPageErrors(page);
  });
});
