import { test } from "node:test";
import assert from "node:assert/strict";
import { ReconnectingSocket } from "../js/socket.js";

/** A fake WebSocket whose instances the test opens, feeds and closes by hand. */
function fakeNetwork() {
  const sockets = [];
  class FakeWebSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
    }
    send(text) { this.sent.push(JSON.parse(text)); }
    close() { this.readyState = 3; this.onclose?.(); }
    serverOpen() { this.readyState = 1; this.onopen?.(); }
    serverSend(msg) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  }
  const timers = [];
  return {
    sockets,
    timers,
    options: {
      WebSocket: FakeWebSocket,
      setTimeout: (fn, ms) => timers.push({ fn, ms }),
      clearTimeout: () => {},
    },
  };
}

function makeSocket(net, received = []) {
  const statuses = [];
  const s = new ReconnectingSocket("ws://x/api/games/1/socket", {
    ...net.options,
    hello: (version) => ({ type: "hello", version }),
    onMessage: (m) => received.push(m),
    onStatus: (st) => statuses.push(st),
  });
  return { s, statuses };
}

test("says hello with no version first, then resumes from the last version seen", () => {
  const net = fakeNetwork();
  const { s, statuses } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  assert.deepEqual(net.sockets[0].sent, [{ type: "hello", version: null }]);
  s.sawVersion(7);
  s.sawVersion(5); // an older version never moves it back
  net.sockets[0].close();
  assert.equal(statuses.at(-1), "down");
  assert.equal(net.timers.length, 1, "a reconnection is scheduled");
  net.timers.shift().fn();
  net.sockets[1].serverOpen();
  assert.deepEqual(net.sockets[1].sent[0], { type: "hello", version: 7 });
  assert.equal(statuses.at(-1), "open");
});

test("a move is resent after a reconnect until acknowledged, then never again", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  net.sockets[0].close(); // the ack never arrived
  net.timers.shift().fn();
  net.sockets[1].serverOpen();
  assert.deepEqual(net.sockets[1].sent, [
    { type: "hello", version: null },
    { type: "move", uci: "e2e4", ply: 0 },
  ]);
  s.acknowledge(0);
  net.sockets[1].close();
  net.timers.shift().fn();
  net.sockets[2].serverOpen();
  assert.deepEqual(net.sockets[2].sent, [{ type: "hello", version: null }], "acknowledged move not resent");
});

test("actions sent while down are queued and sent once, after the hello", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  s.send({ type: "resign" });
  assert.equal(s.trySend({ type: "ping", t: 1 }), false, "pings are not queued");
  net.sockets[0].serverOpen();
  assert.deepEqual(net.sockets[0].sent, [{ type: "hello", version: null }, { type: "resign" }]);
  net.sockets[0].close();
  net.timers.shift().fn();
  net.sockets[1].serverOpen();
  assert.deepEqual(net.sockets[1].sent, [{ type: "hello", version: null }], "not sent twice");
});

test("backs off between attempts and stops after close()", () => {
  const net = fakeNetwork();
  const { s, statuses } = makeSocket(net);
  s.connect();
  net.sockets[0].close();
  net.timers.shift().fn();
  net.sockets[1].close();
  assert.ok(net.timers[0].ms > 250, "the second retry waits longer");
  s.close();
  assert.equal(statuses.at(-1), "closed");
  const before = net.timers.length;
  net.sockets[1].onclose?.();
  assert.equal(net.timers.length, before, "no reconnection after close()");
});

test("parses server messages and ignores non-JSON frames", () => {
  const net = fakeNetwork();
  const received = [];
  const { s } = makeSocket(net, received);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "pong", t: 1 });
  net.sockets[0].onmessage({ data: "not json" });
  assert.deepEqual(received, [{ type: "pong", t: 1 }]);
});

test("a connection that goes silent is given up and reconnected", () => {
  const net = fakeNetwork();
  const statuses = [];
  const s = new ReconnectingSocket("ws://x/api/games/1/socket", {
    ...net.options,
    hello: (version) => ({ type: "hello", version }),
    onMessage: () => {},
    onStatus: (st) => statuses.push(st),
    silenceMs: 7000,
  });
  s.connect();
  net.sockets[0].serverOpen();
  assert.equal(net.timers.length, 1, "the silence limit is armed on open");
  assert.equal(net.timers[0].ms, 7000);
  net.sockets[0].serverSend({ type: "pong", t: 1 });
  assert.equal(net.timers.length, 2, "every message re-arms it");
  // The latest limit passes with no message: no close event will ever come.
  net.timers.pop().fn();
  assert.equal(statuses.at(-1), "down");
  const retry = net.timers.pop();
  assert.ok(retry.ms <= 1000, "a reconnection is scheduled at once");
  retry.fn();
  assert.equal(net.sockets.length, 2, "a new connection is opened");
  net.sockets[1].serverOpen();
  assert.equal(statuses.at(-1), "open");
  // The old connection's late events change nothing.
  net.sockets[0].serverSend({ type: "pong", t: 2 });
  assert.equal(net.sockets[1].readyState, 1);
});

test("without a silence limit a quiet connection stays", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  assert.equal(net.timers.length, 0);
});
