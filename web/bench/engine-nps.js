#!/usr/bin/env node
// The WebAssembly engine's speed against the native engine's on this machine:
// nodes per second over the same positions and think time, natively (the
// chess-engine binary over UCI), in Node and in Chromium (headless). Prints the
// figures; the goal (docs/performance.md) is at least half the native speed.
//
//   node web/bench/engine-nps.js [--positions 24] [--ms 500]
//
// Needs the release engine (cargo build --release -p chess-engine, or
// CHESS_ENGINE_BIN) and the WebAssembly build (CHESS_WASM_DIR, default
// target/wasm/pkg); Chromium from CHROMIUM_PATH (default /usr/bin/chromium).

import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

import { WASM_DIR, chess } from "../test/wasm-support.js";
import { nativeEngine, testPositions } from "../test/engine-support.js";

const { values } = parseArgs({ options: { positions: { type: "string", default: "24" }, ms: { type: "string", default: "500" } } });
const count = Number(values.positions);
const ms = Number(values.ms);

const wasm = await chess();
const positions = testPositions(wasm, count, 7);

async function native() {
  const engine = nativeEngine();
  let nodes = 0;
  let time = 0;
  for (const fen of positions) {
    engine.send("ucinewgame");
    engine.send(`position fen ${fen}`);
    engine.send(`go movetime ${ms}`);
    const { seen } = await engine.until("bestmove");
    const info = seen.filter((l) => l.startsWith("info depth")).at(-1) ?? "";
    nodes += Number(/ nodes (\d+)/.exec(info)?.[1] ?? 0);
    time += Number(/ time (\d+)/.exec(info)?.[1] ?? 0);
  }
  engine.close();
  return { nodes, time };
}

/** Runs in Node and, as text, in the browser page: the same searches through the bindings. */
function searchAll(Engine, fens, ms) {
  const engine = new Engine(1);
  let nodes = 0;
  let time = 0;
  for (const fen of fens) {
    engine.new_game();
    let last = null;
    engine.search(JSON.stringify({ initial_fen: fen, level: 2, limit: { kind: "movetime", ms } }), (r) => (last = JSON.parse(r)));
    nodes += last?.nodes ?? 0;
    time += last?.elapsed_ms ?? 0;
  }
  engine.free();
  return { nodes, time };
}

async function inChromium() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    const files = { "/chess_wasm.js": "text/javascript", "/chess_wasm_bg.wasm": "application/wasm" };
    await page.route("http://bench.invalid/**", (route) => {
      const name = new URL(route.request().url()).pathname;
      if (!files[name]) return route.fulfill({ status: 404, body: "" });
      return route.fulfill({ status: 200, contentType: files[name], body: readFileSync(path.join(WASM_DIR, name)) });
    });
    await page.route("http://bench.invalid/", (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>bench</title>" }));
    await page.goto("http://bench.invalid/");
    return await page.evaluate(
      async ({ fens, ms, body }) => {
        const glue = await import("/chess_wasm.js");
        await glue.default({ module_or_path: "/chess_wasm_bg.wasm" });
        return new Function("Engine", "fens", "ms", `return (${body})(Engine, fens, ms);`)(glue.Engine, fens, ms);
      },
      { fens: positions, ms, body: searchAll.toString() },
    );
  } finally {
    await browser.close();
  }
}

const nps = ({ nodes, time }) => Math.round((nodes * 1000) / Math.max(1, time));
const base = nps(await native());
const node = nps(searchAll(wasm.Engine, positions, ms));
const browser = nps(await inChromium());
const line = (name, value) => console.log(`${name.padEnd(24)} ${String(value).padStart(10)} nodes/s${name === "native" ? "" : `  (${(value / base).toFixed(2)} of native)`}`);
console.log(`${count} positions, ${ms} ms each`);
line("native", base);
line("WebAssembly in Node", node);
line("WebAssembly in Chromium", browser);
