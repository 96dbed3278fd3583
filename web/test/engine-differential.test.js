// The WebAssembly engine is the native engine: at a fixed depth from a fresh
// table, it picks the same move on a thousand positions (set ENGINE_POSITIONS
// for more or fewer).

import { test } from "node:test";
import assert from "node:assert/strict";

import { chess } from "./wasm-support.js";
import { nativeEngine, testPositions } from "./engine-support.js";

const COUNT = Number(process.env.ENGINE_POSITIONS ?? 1000);
const DEPTH = 5;

test(`a depth-${DEPTH} search picks the native engine's move on ${COUNT} positions`, async () => {
  const wasm = await chess();
  const positions = testPositions(wasm, COUNT, 20261207);
  assert.equal(new Set(positions).size > COUNT * 0.9, true, "varied positions");
  const native = nativeEngine();
  const engine = new wasm.Engine(1);
  const differ = [];
  try {
    for (const fen of positions) {
      engine.new_game();
      const report = JSON.parse(engine.search(JSON.stringify({ initial_fen: fen, level: 2, limit: { kind: "depth", depth: DEPTH } }), () => {}));
      const expected = await native.bestMove(fen, DEPTH);
      if (report.best_move !== expected.move) differ.push({ fen, wasm: report.best_move, native: expected.move, info: expected.info });
    }
  } finally {
    native.close();
    engine.free();
  }
  assert.deepEqual(differ, [], `${differ.length} of ${COUNT} positions differ`);
});
