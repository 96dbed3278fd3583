import { test } from "node:test";
import assert from "node:assert/strict";

import { applyServerMessage } from "../js/game-state.js";
import { INDEX_KEY, LocalHost, createLocalGame, localGameSummaries, storageKey } from "../js/local-host.js";
import { engineHandler } from "../js/engine-protocol.js";
import { MemoryStorage, chess } from "./wasm-support.js";

const T0 = 1_764_000_000_000;

/** The engine in this process, behind EngineClient's interface. */
function inProcessEngine(wasm) {
  const engine = new wasm.Engine(7);
  const searches = [];
  return {
    searches,
    cancelled: 0,
    search(request) {
      searches.push(request);
      return new Promise((resolve, reject) => {
        engineHandler(engine, (msg) => {
          if (msg.type === "done") resolve(msg.report);
          if (msg.type === "error") reject(new Error(msg.message));
        })({ type: "search", id: 1, request });
      });
    },
    cancel() {
      this.cancelled += 1;
    },
  };
}

/** A host on `storage` whose messages build the page's game as game.js does. */
function open(wasm, storage, id, { engine = inProcessEngine(wasm), now = () => T0 } = {}) {
  const page = { game: null, messages: [], timers: [] };
  const host = new LocalHost({
    chess: wasm,
    id,
    storage,
    engine,
    now,
    newId: () => "rematch-1",
    setTimeout: (fn, ms) => page.timers.push({ fn, ms }) - 1,
    clearTimeout: () => {},
    onMessage: (msg) => {
      page.messages.push(msg);
      page.game = applyServerMessage(page.game, msg).game;
    },
  });
  host.connect();
  return { host, page, engine };
}

const until = async (check) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), "in time");
};

test("a one-screen game is played to mate from the page's messages, and survives a reload", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  const url = createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "5+3", id: "g1", now: T0 });
  assert.equal(url, "/local/g1");
  assert.deepEqual(JSON.parse(storage.getItem(INDEX_KEY)), ["g1"]);

  const { host, page } = open(wasm, storage, "g1");
  assert.equal(page.game.mode, "local");
  assert.equal(page.game.seat, "both");
  assert.deepEqual(page.game.dests.g1, ["f3", "h3"]);
  for (const [ply, uci] of ["f2f3", "e7e5", "g2g4", "d8h4"].entries()) host.sendMove({ type: "move", uci, ply });
  assert.equal(page.game.status, "finished");
  assert.deepEqual(page.game.result, { winner: "black", reason: "checkmate" });
  assert.deepEqual(page.game.moves.map((m) => m.san), ["f3", "e5", "g4", "Qh4#"]);
  assert.match(host.pgn(new Date(2026, 11, 7)), /\[Date "2026\.12\.07"\][\s\S]*2\.\.\. Qh4# .* 0-1/);

  // A refused move is an error message, and the game stays as it was.
  host.send({ type: "move", uci: "e2e4", ply: 4 });
  assert.equal(page.messages.at(-1).type, "error");
  assert.equal(page.messages.at(-1).code, "game_over");

  // Another tab, or the same one reloaded, finds it as it was.
  const reloaded = open(wasm, storage, "g1");
  assert.deepEqual(reloaded.page.game, page.game);
  host.close();
  reloaded.host.close();
});

test("a take-back and a promotion on one screen", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "correspondence", id: "p1", now: T0 });
  const { host, page } = open(wasm, storage, "p1");
  const moves = ["h2h4", "g7g5", "h4g5", "h7h6", "g5h6", "f8g7", "h6g7", "a7a6"];
  for (const [ply, uci] of moves.entries()) host.sendMove({ type: "move", uci, ply });
  host.send({ type: "takeback" });
  assert.equal(page.game.moves.length, 7, "one move undone");
  assert.equal(page.game.turn, "black");
  host.sendMove({ type: "move", uci: "g8f6", ply: 7 });
  // A pawn that reaches the last rank must say what it becomes.
  host.sendMove({ type: "move", uci: "g7h8", ply: 8 });
  assert.equal(page.messages.at(-1).type, "error");
  host.sendMove({ type: "move", uci: "g7h8n", ply: 8 });
  assert.equal(page.game.moves.at(-1).san, "gxh8=N");
  assert.match(page.game.fen, /^rnbqk2N\//);
  host.close();
});

test("against the computer the engine answers every move of the person, at the level asked", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  createLocalGame(wasm, storage, {
    opponent: { kind: "computer", level: 1, color: "black" },
    timeControl: "correspondence",
    id: "c1",
    now: T0,
  });
  const { host, page, engine } = open(wasm, storage, "c1");
  assert.equal(page.game.seat, "white");
  assert.equal(engine.searches.length, 0, "the person moves first");
  host.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  await until(() => page.game.moves.length === 2);
  assert.equal(engine.searches[0].level, 1);
  assert.deepEqual(engine.searches[0].moves, ["e2e4"]);
  assert.equal(page.game.turn, "white");
  // Its move was saved: the reload has it.
  assert.equal(JSON.parse(storage.getItem(storageKey("c1"))).game.moves.length, 2);
  // Against the computer a take-back gives the person their move back.
  host.send({ type: "takeback" });
  assert.equal(page.game.moves.length, 0);
  host.close();
});

test("a game that is not in this browser, or unreadable, says so", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  const missing = open(wasm, storage, "nope");
  assert.equal(missing.page.messages[0].code, "local_game_not_found");
  storage.setItem(storageKey("bad"), "{\"id\": 1}");
  const bad = open(wasm, storage, "bad");
  assert.equal(bad.page.messages[0].code, "local_game_unreadable");
  assert.equal(bad.host.trySend({ type: "resign" }), false, "no game to play");
});

test("a rematch is saved before the page goes to it, with the colours swapped", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  createLocalGame(wasm, storage, { opponent: { kind: "computer", level: 2, color: "black" }, timeControl: "correspondence", id: "r1", now: T0 });
  const { host, page } = open(wasm, storage, "r1", { engine: { search: () => new Promise(() => {}), cancel() {} } });
  host.send({ type: "abort" });
  assert.equal(page.game.result.reason, "aborted");
  host.send({ type: "rematch_offer" });
  assert.deepEqual(page.messages.at(-1), { type: "redirect", url: "/local/rematch-1" });
  const next = JSON.parse(storage.getItem(storageKey("rematch-1")));
  assert.deepEqual(next.opponent, { kind: "computer", level: 2, color: "white" });
  assert.deepEqual(JSON.parse(storage.getItem(INDEX_KEY)), ["rematch-1", "r1"]);
  host.close();
});

test("a clock that runs out is flagged by the page's timer with nobody moving", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  let now = T0;
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "1+0", id: "f1", now: T0 });
  const { host, page } = open(wasm, storage, "f1", { now: () => now });
  host.sendMove({ type: "move", uci: "e2e4", ply: 0 });
  host.sendMove({ type: "move", uci: "e7e5", ply: 1 });
  const timer = page.timers.at(-1);
  assert.equal(timer.ms, 60_000, "White's minute");
  now += 60_000;
  timer.fn();
  assert.deepEqual(page.game.result, { winner: "black", reason: "timeout" });
  host.close();
});

test("the home page lists this browser's games as the server lists a player's, newest first", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "5+0", id: "a", now: T0 });
  createLocalGame(wasm, storage, { opponent: { kind: "computer", level: 2, color: "white" }, timeControl: "correspondence", id: "b", now: T0 });
  storage.setItem(storageKey("broken"), "nonsense");
  storage.setItem(INDEX_KEY, JSON.stringify(["b", "broken", "gone", "a"]));
  const games = localGameSummaries(wasm, storage, T0);
  assert.deepEqual(games.map((g) => [g.url, g.mode, g.status, g.moves, g.your_turn]), [
    ["/local/b", "computer", "playing", 0, false], // the computer (White) is to move
    ["/local/a", "local", "playing", 0, true],
  ]);
  assert.deepEqual(games[1].time_control, { kind: "clock", initial_ms: 300_000, increment_ms: 0 });
  assert.equal(games[0].players.white.name, "Computer (level 2)");
  storage.setItem(INDEX_KEY, "{");
  assert.deepEqual(localGameSummaries(wasm, storage, T0), []);
});
