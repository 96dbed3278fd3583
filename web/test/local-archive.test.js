import { test } from "node:test";
import assert from "node:assert/strict";

import { ApiError } from "../js/api.js";
import { HANDED_OVER_KEY, handOverFinished } from "../js/local-archive.js";
import { LocalHost, createLocalGame } from "../js/local-host.js";
import { MemoryStorage, chess } from "./wasm-support.js";

const T0 = 1_764_000_000_000;

/** Plays `moves` (and `then`, a message) in the stored game `id`. */
function playIn(wasm, storage, id, moves, then = null) {
  const host = new LocalHost({ chess: wasm, id, storage, engine: { search: () => new Promise(() => {}), cancel() {} }, now: () => T0, onMessage: () => {}, setTimeout: () => 0, clearTimeout: () => {} });
  host.connect();
  for (const [ply, uci] of moves.entries()) host.sendMove({ type: "move", uci, ply });
  if (then) host.send(then);
  host.close();
}

test("finished games are handed over once, named as the server expects; unfinished and aborted ones are not", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "correspondence", id: "mate", now: T0 });
  playIn(wasm, storage, "mate", ["f2f3", "e7e5", "g2g4", "d8h4"]);
  createLocalGame(wasm, storage, { opponent: { kind: "computer", level: 2, color: "white" }, timeControl: "correspondence", id: "waiting", now: T0 });
  playIn(wasm, storage, "waiting", []); // the computer (White) has not moved yet
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "correspondence", id: "open", now: T0 });
  playIn(wasm, storage, "open", ["e2e4"]);
  createLocalGame(wasm, storage, { opponent: { kind: "one_screen" }, timeControl: "correspondence", id: "aborted", now: T0 });
  playIn(wasm, storage, "aborted", [], { type: "abort" });

  const sent = [];
  const result = await handOverFinished({ chess: wasm, storage, username: "alice", upload: async (body) => sent.push(body) });
  assert.deepEqual(result, { kept: 1, refused: 0 });
  assert.equal(sent.length, 1);
  assert.equal(sent[0].game.id, "mate");
  assert.deepEqual([sent[0].white, sent[0].black], ["alice", "alice"]);
  assert.equal(sent[0].game.game.moves.length, 4);
  assert.deepEqual(JSON.parse(storage.getItem(HANDED_OVER_KEY)), ["mate"]);

  // Once handed over, never again.
  assert.deepEqual(await handOverFinished({ chess: wasm, storage, username: "alice", upload: async (body) => sent.push(body) }), { kept: 0, refused: 0 });
  assert.equal(sent.length, 1);
});

test("a refusal is final, while no answer or a busy server means trying again later", async () => {
  const wasm = await chess();
  const storage = new MemoryStorage();
  for (const id of ["a", "b"]) {
    createLocalGame(wasm, storage, { opponent: { kind: "computer", level: 1, color: "black" }, timeControl: "correspondence", id, now: T0 });
    playIn(wasm, storage, id, ["e2e4"]);
  }
  // The person resigns after the computer's reply (played here by hand).
  for (const id of ["a", "b"]) {
    const game = wasm.LocalGame.restore(storage.getItem(`chess.local.${id}`));
    game.computer_move("e7e5", 1, T0);
    game.command(JSON.stringify({ type: "resign" }), T0, "x");
    storage.setItem(`chess.local.${id}`, game.save());
    game.free();
  }
  const offline = await handOverFinished({ chess: wasm, storage, username: "bob", upload: async () => { throw new TypeError("Failed to fetch"); } });
  assert.deepEqual(offline, { kept: 0, refused: 0 });
  assert.equal(storage.getItem(HANDED_OVER_KEY), null, "nothing marked: tried again next time");
  const busy = await handOverFinished({ chess: wasm, storage, username: "bob", upload: async () => { throw new ApiError(429, "too_many_requests", "later"); } });
  assert.deepEqual(busy, { kept: 0, refused: 0 });
  const names = [];
  const refusedAll = await handOverFinished({
    chess: wasm,
    storage,
    username: "bob",
    upload: async (body) => {
      names.push([body.white, body.black]);
      throw new ApiError(422, "result_does_not_follow", "no");
    },
  });
  assert.deepEqual(refusedAll, { kept: 0, refused: 2 });
  assert.deepEqual(names[0], ["bob", "Computer (level 1)"]);
  assert.equal(JSON.parse(storage.getItem(HANDED_OVER_KEY)).length, 2);
});
