// Two accounts play a rated game: the game page shows both ratings, with a
// `?` while provisional, and the change at the end; the winner's player page
// then shows the new blitz rating and its history chart.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startServerAndBrowser, newPlayer, api, blitz, clickMove, waitForStatus, assertNoPageErrors } from "./harness.js";

describe("ratings on the game page", () => {
  const suite = startServerAndBrowser();

  test("a rated game shows both ratings and the change at the end", async () => {
    const white = await newPlayer(suite);
    const black = await newPlayer(suite);
    await api(white, "POST", "/api/account/sign-up", { username: "Whitney", password: "correct horse battery" });
    await api(black, "POST", "/api/account/sign-up", { username: "Blake", password: "correct horse battery" });
    const created = await api(white, "POST", "/api/challenges", { time_control: blitz, color: "white", rated: true });
    await white.goto(created.url);
    await black.goto(created.url);
    await waitForStatus(white, /Your move/);
    const rating = (page, color) => page.locator(`.player[data-color="${color}"] .rating`);
    for (const page of [white, black]) {
      for (const color of ["white", "black"]) {
        await rating(page, color).filter({ hasText: /^1500\?$/ }).waitFor();
      }
    }
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);
    await black.getByRole("button", { name: "Resign" }).click();
    await black.getByRole("button", { name: "Yes, resign" }).click();
    for (const page of [white, black]) {
      await waitForStatus(page, /^White wins by resignation$/);
      // Both started at 1500: the winner gains what the loser drops.
      await rating(page, "white").filter({ hasText: /^1500\? \+\d+$/ }).waitFor();
      await rating(page, "black").filter({ hasText: /^1500\? -\d+$/ }).waitFor();
    }
    const gain = Number((await rating(white, "white").textContent()).split("+")[1]);
    const loss = Number((await rating(white, "black").textContent()).split("-")[1]);
    assert.ok(gain > 0 && gain === loss, `+${gain} / -${loss}`);

    await white.goto("/@/whitney");
    const blitzRating = white.locator('#ratings .rating[data-speed="blitz"]');
    await blitzRating.waitFor();
    assert.equal(await white.locator("#ratings .rating").count(), 1, "only the speed played is listed");
    assert.equal(await blitzRating.locator(".rating-value").textContent(), `${1500 + gain}?`);
    assert.match(await blitzRating.textContent(), /\b1 game\b/);
    const points = blitzRating.locator("svg.rating-chart .rating-point");
    assert.equal(await points.count(), 1, "one rated game: one point on the chart");
    assert.equal(Math.round(Number(await points.first().getAttribute("data-rating"))), 1500 + gain);
    assertNoPageErrors(white, black);
  });
});
