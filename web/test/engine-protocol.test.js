import { test } from "node:test";
import assert from "node:assert/strict";

import { EngineClient } from "../js/engine-client.js";
import { engineHandler, randomSeed } from "../js/engine-protocol.js";
import { chess } from "./wasm-support.js";

test("the worker's handler reports each depth, then the result, with the real engine", async () => {
  const wasm = await chess();
  const posted = [];
  const handle = engineHandler(new wasm.Engine(1), (msg) => posted.push(msg));
  handle({ type: "search", id: 4, request: { moves: ["f2f3", "e7e5", "g2g4"], level: 2, limit: { kind: "depth", depth: 3 } } });
  const done = posted.at(-1);
  assert.equal(done.type, "done");
  assert.equal(done.id, 4);
  assert.equal(done.report.best_move, "d8h4");
  assert.deepEqual(done.report.pv_san.slice(0, 1), ["Qh4#"]);
  assert.deepEqual(done.report.score, { mate: 1 });

  posted.length = 0;
  handle({ type: "search", id: 5, request: { level: 2, limit: { kind: "depth", depth: 4 } } });
  assert.deepEqual(posted.filter((m) => m.type === "iteration").map((m) => m.report.depth), [1, 2, 3, 4]);
  assert.ok(posted.every((m) => m.id === 5));
});

test("the worker's handler refuses bad requests with a message and stays usable", async () => {
  const wasm = await chess();
  const posted = [];
  const handle = engineHandler(new wasm.Engine(1), (msg) => posted.push(msg));
  handle({ type: "search", id: 1, request: { level: 9, limit: { kind: "depth", depth: 1 } } });
  handle({ type: "search", id: 2, request: { moves: ["e2e5"], level: 1, limit: { kind: "depth", depth: 1 } } });
  handle({ type: "think", id: 3 });
  assert.deepEqual(posted.map((m) => [m.type, m.id]), [["error", 1], ["error", 2], ["error", 3]]);
  assert.match(posted[0].message, /level/);
  assert.match(posted[1].message, /e2e5/);
  handle({ type: "search", id: 4, request: { level: 1, limit: { kind: "depth", depth: 1 } } });
  assert.equal(posted.at(-1).type, "done");
  assert.equal(randomSeed(() => 0.5), 0x8000_0000);
});

/** A Worker the test answers by hand. */
function fakeWorkers() {
  const workers = [];
  const makeWorker = (url) => {
    const worker = { url, posted: [], terminated: false, postMessage(m) { this.posted.push(m); }, terminate() { this.terminated = true; } };
    workers.push(worker);
    return worker;
  };
  return { workers, makeWorker };
}

test("the client hears the running search only, and a newer search ends the older one's worker", async () => {
  const { workers, makeWorker } = fakeWorkers();
  const client = new EngineClient({ makeWorker });
  const depths = [];
  const first = client.search({ level: 2 }, { onIteration: (r) => depths.push(r.depth) });
  const worker = workers[0];
  assert.equal(worker.url, "/js/engine-worker.js");
  const id = worker.posted[0].id;
  worker.onmessage({ data: { type: "iteration", id, report: { depth: 1 } } });
  worker.onmessage({ data: { type: "done", id: id + 99, report: {} } }); // someone else's
  const second = client.search({ level: 1 });
  await assert.rejects(first, /cancelled/);
  assert.ok(worker.terminated, "the busy worker was ended");
  assert.deepEqual(depths, [1]);
  const fresh = workers[1];
  fresh.onmessage({ data: { type: "done", id: fresh.posted[0].id, report: { best_move: "e2e4" } } });
  assert.deepEqual(await second, { best_move: "e2e4" });

  const refused = client.search({ level: 3 });
  fresh.onmessage({ data: { type: "error", id: fresh.posted[1].id, message: "the level is 1 or 2" } });
  await assert.rejects(refused, /level is 1 or 2/);
  const crashed = client.search({ level: 1 });
  fresh.onerror({ message: "out of memory" });
  await assert.rejects(crashed, /out of memory/);
  assert.ok(fresh.terminated);
});
