// The native engine (the chess-engine binary, over UCI) and a set of test
// positions, for comparing the WebAssembly engine with it.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ENGINE_BIN = process.env.CHESS_ENGINE_BIN ?? path.join(here, "../../target/release/chess-engine");

/** A UCI session with the native engine; `send(line)` and `until(prefix)` resolve its answers. */
export function nativeEngine(bin = ENGINE_BIN) {
  if (!existsSync(bin)) {
    throw new Error(`no native engine at ${bin}: cargo build --release -p chess-engine, or set CHESS_ENGINE_BIN`);
  }
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  const seen = [];
  lines.on("line", (line) => {
    seen.push(line);
    for (let i = 0; i < waiting.length; i++) {
      if (line.startsWith(waiting[i].prefix)) {
        waiting.splice(i, 1)[0].resolve({ line, seen: seen.splice(0) });
        return;
      }
    }
  });
  const send = (line) => child.stdin.write(`${line}\n`);
  const until = (prefix) => new Promise((resolve) => waiting.push({ prefix, resolve }));
  return {
    send,
    until,
    /** The best move at fixed `depth` from a fresh table, and the last info line. */
    async bestMove(fen, depth) {
      send("ucinewgame");
      send(`position fen ${fen}`);
      send(`go depth ${depth}`);
      const { line, seen: before } = await until("bestmove");
      return { move: line.split(" ")[1], info: before.filter((l) => l.startsWith("info depth")).at(-1) ?? "" };
    },
    close() {
      send("quit");
      child.stdin.end();
    },
  };
}

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` positions (FEN) reached by random games played with the
 * WebAssembly rules, from `seed`: every stage of a game, each with a legal move.
 */
export function testPositions(chess, count, seed = 1) {
  const random = seeded(seed);
  const positions = [];
  while (positions.length < count) {
    const game = new chess.LocalGame("p", JSON.stringify({ kind: "one_screen" }), "correspondence", 0);
    const length = 1 + Math.floor(random() * 90);
    let state = JSON.parse(game.state(0));
    for (let ply = 0; ply < length && state.status === "playing"; ply++) {
      const froms = Object.keys(state.dests);
      const from = froms[Math.floor(random() * froms.length)];
      const tos = state.dests[from];
      const to = tos[Math.floor(random() * tos.length)];
      let answer = JSON.parse(game.command(JSON.stringify({ type: "move", uci: from + to, ply }), 0, "n"));
      // A pawn reaching the last rank names its piece.
      if (answer[0].type === "error") answer = JSON.parse(game.command(JSON.stringify({ type: "move", uci: `${from}${to}q`, ply }), 0, "n"));
      state = JSON.parse(game.state(0));
    }
    game.free();
    if (state.status === "playing") positions.push(state.fen);
  }
  return positions;
}
