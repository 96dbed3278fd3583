// A connection that goes silent without closing (a phone that lost its
// signal): the page must notice by itself and reconnect, and the moves made
// meanwhile must reach it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startServerAndBrowser, onlineGame, clickMove, waitForMoves, sanList } from "./harness.js";

describe("a silent connection", () => {
  const suite = startServerAndBrowser({ relay: true });

  test("is noticed by the page, which reconnects and gets the moves it missed", async () => {
    // Black's browser reaches the server through the relay.
    const { white, black } = await onlineGame(suite, { kind: "correspondence" }, { black: { url: suite.relay.url } });
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);

    // The page's connection states, as the page itself records them: the
    // "down" spell lasts only until the first reconnection (a quarter of a
    // second), too short to be sure to catch by polling the page.
    await black.evaluate(() => {
      window.connectionStates = [];
      new MutationObserver(() => window.connectionStates.push(document.body.dataset.connection))
        .observe(document.body, { attributes: true, attributeFilter: ["data-connection"] });
    });
    suite.relay.silenceCurrent();
    await clickMove(white, "g1", "f3");
    // No close ever arrives: the page gives the connection up on its own ...
    await black.waitForFunction(() => window.connectionStates.includes("down"), null, { timeout: 20_000 });
    assert.equal(await black.locator("#connection").textContent(), "Reconnecting…");
    // ... and its new connection (the signal is back) brings the missed move.
    await black.waitForFunction(() => window.connectionStates.at(-1) === "open", null, { timeout: 20_000 });
    await black.locator("#connection").waitFor({ state: "hidden", timeout: 20_000 });
    await waitForMoves(black, 3);
    assert.deepEqual(await sanList(black), ["e4", "e5", "Nf3"]);
  });
});
