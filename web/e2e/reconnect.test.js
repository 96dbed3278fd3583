// The connection: the server going away and coming back, and a refresh.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  startServerAndBrowser, onlineGame, clickMove, square, waitForMoves, sanList, assertNoPageErrors,
} from "./harness.js";

describe("reconnection", () => {
  const suite = startServerAndBrowser();

  test("after the server closes the socket the page shows it, reconnects, and no move is lost or doubled", async () => {
    const { white, black } = await onlineGame(suite, { kind: "correspondence" });
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);

    await suite.server.stop(); // closes every socket
    for (const page of [white, black]) await page.locator("#connection").waitFor({ state: "visible" });

    // A move made while the connection is down is kept and sent once it is back.
    await square(white, "g1").click();
    await square(white, "f3").click();
    assert.equal(await square(white, "f3").getAttribute("aria-label"), "f3, white knight");

    await suite.server.start();
    for (const page of [white, black]) await page.locator("#connection").waitFor({ state: "hidden" });
    await waitForMoves(black, 3);
    await waitForMoves(white, 3);
    await clickMove(black, "b8", "c6", [white]);
    assert.deepEqual(await sanList(white), ["e4", "e5", "Nf3", "Nc6"]);
    assert.deepEqual(await sanList(black), ["e4", "e5", "Nf3", "Nc6"]);
    assertNoPageErrors(white, black);
  });
});
