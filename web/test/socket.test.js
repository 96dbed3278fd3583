import { test } from "node:test";
import assert from "node:assert/strict";
import { RECONNECT_DELAYS_MS, RESTART_RECONNECT_DELAY_MS, ReconnectingSocket } from "../js/socket.js";

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
    close(code) { this.readyState = 3; this.onclose?.({ code }); }
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
      // The middle of the spread: every retry waits exactly its delay.
      random: () => 0.5,
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

/** Drops the current connection and opens the next one; returns the new fake socket. */
function reconnect(net) {
  net.sockets.at(-1).close();
  net.timers.shift().fn();
  const next = net.sockets.at(-1);
  next.serverOpen();
  return next;
}

const moveEvent = (version, ply, uci) => ({ type: "event", version, event: { kind: "move", ply, uci, san: "?" } });

test("says hello with no version first, then resumes from the last version seen", () => {
  const net = fakeNetwork();
  const { s, statuses } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  assert.deepEqual(net.sockets[0].sent, [{ type: "hello", version: null }]);
  net.sockets[0].serverSend({ type: "state", version: 4, moves: [] });
  net.sockets[0].serverSend(moveEvent(7, 0, "e2e4"));
  net.sockets[0].serverSend(moveEvent(5, 0, "e2e4")); // an older version never moves it back
  net.sockets[0].close();
  assert.equal(statuses.at(-1), "down");
  assert.equal(net.timers.length, 1, "a reconnection is scheduled");
  net.timers.shift().fn();
  net.sockets[1].serverOpen();
  assert.deepEqual(net.sockets[1].sent[0], { type: "hello", version: 7 });
  assert.equal(statuses.at(-1), "open");
});

test("a state sets the version even when it is lower; events before any state do not count", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend(moveEvent(3, 0, "e2e4")); // the page cannot apply it: no state yet
  assert.equal(s.lastVersion, null);
  net.sockets[0].serverSend({ type: "state", version: 9, moves: [] });
  net.sockets[0].serverSend({ type: "state", version: 2, moves: [] }); // the server's snapshot is the truth
  assert.equal(s.lastVersion, 2);
  net.sockets[0].serverSend({ type: "lobby", seeks: [] }); // other messages leave it alone
  assert.deepEqual(reconnect(net).sent[0], { type: "hello", version: 2 });
});

test("a move is resent after a reconnect until acknowledged, then never again", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  // the ack never arrived
  assert.deepEqual(reconnect(net).sent, [
    { type: "hello", version: null },
    { type: "move", uci: "e2e4", ply: 0 },
  ]);
  net.sockets[1].serverSend({ type: "ack", ply: 0, uci: "e2e4", version: 1 });
  assert.deepEqual(reconnect(net).sent, [{ type: "hello", version: null }], "acknowledged move not resent");
});

test("a sent move is pending until the move list has its ply, even after its ack", () => {
  const net = fakeNetwork();
  const received = [];
  const s = new ReconnectingSocket("ws://x", {
    ...net.options,
    hello: (version) => ({ type: "hello", version }),
    onMessage: (msg, details) => received.push({ msg, details }),
  });
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "state", version: 1, moves: [] });
  assert.equal(s.pendingMove, null);
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  assert.deepEqual(s.pendingMove, { type: "move", uci: "e2e4", ply: 0 });
  net.sockets[0].serverSend({ type: "ack", ply: 0, uci: "e2e4", version: 2 });
  assert.deepEqual(s.pendingMove?.uci, "e2e4", "still shown: the event has not come");
  net.sockets[0].serverSend(moveEvent(2, 0, "e2e4"));
  assert.equal(s.pendingMove, null);
  assert.deepEqual(received.at(-1).details.settledMoves, [{ type: "move", uci: "e2e4", ply: 0 }],
    "the page learns the event was its own move");
  assert.deepEqual(received.at(-2).details.settledMoves, [], "an ack settles nothing");
});

test("a full state settles every pending move below its move count", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "state", version: 1, moves: [] });
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  net.sockets[0].serverSend({ type: "state", version: 5, moves: [{ uci: "d2d4" }] }); // played elsewhere first
  assert.equal(s.pendingMove, null);
  assert.deepEqual(reconnect(net).sent, [{ type: "hello", version: 5 }], "a settled move is not resent");
});

test("an event already seen settles nothing (a take-back may have reopened that ply)", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "state", version: 6, moves: [{ uci: "e2e4" }] });
  s.sendMove({ type: "move", uci: "d7d5", ply: 1 });
  net.sockets[0].serverSend(moveEvent(4, 1, "e7e5")); // stale
  assert.deepEqual(s.pendingMove?.uci, "d7d5");
});

test("a refused move is neither shown nor resent; the oldest unacknowledged move is the refused one", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "state", version: 1, moves: [] });
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  net.sockets[0].serverSend({ type: "error", code: "rate_limited", in_reply_to: "ping" });
  assert.deepEqual(s.pendingMove?.uci, "e2e4", "an error about another message changes nothing");
  net.sockets[0].serverSend({ type: "error", code: "illegal_move", in_reply_to: "move" });
  assert.equal(s.pendingMove, null);
  assert.deepEqual(reconnect(net).sent, [{ type: "hello", version: 1 }]);

  // Two moves in flight (one screen, both seats): the first was stored, the second refused.
  s.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  s.sendMove({ type: "move", uci: "e7e5", ply: 1 });
  net.sockets[1].serverSend({ type: "ack", ply: 0, uci: "e2e4", version: 2 });
  net.sockets[1].serverSend({ type: "error", code: "not_your_turn", in_reply_to: "move" });
  assert.deepEqual(s.pendingMove?.uci, "e2e4", "the acknowledged move stays until its event");
  assert.deepEqual(reconnect(net).sent, [{ type: "hello", version: 1 }]);
  net.sockets[2].serverSend({ type: "state", version: 2, moves: [{ uci: "e2e4" }] });

  // Two unanswered moves: the server answers in order, so the refusal is the older one's.
  s.sendMove({ type: "move", uci: "e7e5", ply: 1 });
  s.sendMove({ type: "move", uci: "g1f3", ply: 2 });
  net.sockets[2].serverSend({ type: "error", code: "illegal_move", in_reply_to: "move" });
  assert.deepEqual(reconnect(net).sent, [{ type: "hello", version: 2 }, { type: "move", uci: "g1f3", ply: 2 }]);
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

test("a server that restarts (1012) is tried again at once, other closes after the first delay", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].close(1012);
  assert.equal(net.timers.at(-1).ms, RESTART_RECONNECT_DELAY_MS);
  net.timers.pop().fn();
  // The next node refuses too: the usual back-off from there.
  net.sockets[1].close(1006);
  assert.equal(net.timers.at(-1).ms, RECONNECT_DELAYS_MS[1]);
  net.timers.pop().fn();
  net.sockets[2].serverOpen();
  net.sockets[2].close(1006);
  assert.equal(net.timers.at(-1).ms, RECONNECT_DELAYS_MS[0], "an abnormal close waits the first delay");
});

test("retry delays are spread between half and one and a half times their value", () => {
  for (const [random, factor] of [[0, 0.5], [0.999, 1.499]]) {
    const net = fakeNetwork();
    const s = new ReconnectingSocket("ws://x/api/games/1/socket", {
      ...net.options,
      random: () => random,
      hello: (version) => ({ type: "hello", version }),
      onMessage: () => {},
    });
    s.connect();
    net.sockets[0].close();
    assert.equal(net.timers.at(-1).ms, Math.round(RECONNECT_DELAYS_MS[0] * factor));
    s.close();
  }
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

test("a premove message's version is resumed from, so it is not replayed", () => {
  const net = fakeNetwork();
  const { s } = makeSocket(net);
  s.connect();
  net.sockets[0].serverOpen();
  net.sockets[0].serverSend({ type: "premove", version: 3, premove: { uci: "g8f6" }, reason: "set" }); // before any state
  assert.equal(s.lastVersion, null);
  net.sockets[0].serverSend({ type: "state", version: 8, moves: [] });
  net.sockets[0].serverSend({ type: "premove", version: 9, premove: { uci: "g8f6" }, reason: "set" });
  net.sockets[0].serverSend({ type: "premove", version: 6, premove: null, reason: "cancelled" }); // older: no step back
  assert.equal(s.lastVersion, 9);
  assert.deepEqual(reconnect(net).sent[0], { type: "hello", version: 9 });
});
