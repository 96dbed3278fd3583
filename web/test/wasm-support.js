// Loads the WebAssembly build of crates/chess-wasm for the unit tests under
// Node: the server's build script leaves it in <target>/wasm/pkg, which
// run-tests.sh passes as CHESS_WASM_DIR.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

import { loadChess } from "../js/chess-wasm.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const WASM_DIR = process.env.CHESS_WASM_DIR ?? path.join(here, "../../target/wasm/pkg");

/** The loaded module; fails with what to do when it has not been built. */
export async function chess() {
  const glue = path.join(WASM_DIR, "chess_wasm.js");
  const module = path.join(WASM_DIR, "chess_wasm_bg.wasm");
  if (!existsSync(glue) || !existsSync(module)) {
    throw new Error(`no WebAssembly build in ${WASM_DIR}: build the server (cargo build -p chess-server) or set CHESS_WASM_DIR`);
  }
  return loadChess({ glue: pathToFileURL(glue).href, module: readFileSync(module) });
}

/** A Storage in memory (the localStorage interface). */
export class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}
