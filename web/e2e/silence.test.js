// A connection that goes silent without closing (a phone that lost its
// signal): the page must notice by itself and reconnect, and the moves made
// meanwhile must reach it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import {
  TestServer, launchBrowser, newPlayer, api, clickMove, waitForMoves, waitForStatus, sanList,
} from "./harness.js";

/** A free TCP port on the loopback address. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A TCP relay on `port` to `targetPort`. `silenceCurrent()` makes every connection open
 * now swallow all bytes both ways while staying open; later connections pass
 * (the signal is back).
 */
async function startRelay(port, targetPort) {
  const connections = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    const link = { silent: false, client, upstream };
    connections.add(link);
    client.on("data", (chunk) => { if (!link.silent) upstream.write(chunk); });
    upstream.on("data", (chunk) => { if (!link.silent) client.write(chunk); });
    // While silent not even a close gets through: the page must find out itself.
    client.on("close", () => { if (!link.silent) upstream.destroy(); connections.delete(link); });
    upstream.on("close", () => { if (!link.silent) client.destroy(); });
    client.on("error", () => {});
    upstream.on("error", () => {});
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    silenceCurrent() {
      for (const link of connections) link.silent = true;
    },
    async close() {
      for (const link of connections) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("a silent connection", () => {
  const suite = { server: null, browser: null, relay: null };
  before(async () => {
    const serverPort = await freePort();
    const relayPort = await freePort();
    suite.server = new TestServer({
      env: { ALLOWED_ORIGINS: `http://127.0.0.1:${serverPort},http://127.0.0.1:${relayPort}` },
    });
    suite.server.port = serverPort;
    await suite.server.start();
    suite.relay = await startRelay(relayPort, serverPort);
    suite.browser = await launchBrowser();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.relay?.close();
    await suite.server?.dispose();
  });

  test("is noticed by the page, which reconnects and gets the moves it missed", async () => {
    const white = await newPlayer(suite);
    // Black's browser reaches the server through the relay.
    const black = await newPlayer({ browser: suite.browser, server: { url: suite.relay.url } });
    const created = await api(white, "POST", "/api/challenges", { time_control: { kind: "correspondence" }, color: "white" });
    await white.goto(created.url);
    await black.goto(created.url);
    await waitForStatus(black, /to move|Your move/);
    await waitForStatus(white, /Your move/);
    await clickMove(white, "e2", "e4", [black]);
    await clickMove(black, "e7", "e5", [white]);

    suite.relay.silenceCurrent();
    await clickMove(white, "g1", "f3");
    // No close ever arrives: the page gives the connection up on its own ...
    await black.locator("#connection").waitFor({ state: "visible", timeout: 20_000 });
    // ... and its new connection (the signal is back) brings the missed move.
    await black.locator("#connection").waitFor({ state: "hidden", timeout: 20_000 });
    await waitForMoves(black, 3);
    assert.deepEqual(await sanList(black), ["e4", "e5", "Nf3"]);
  });
});
