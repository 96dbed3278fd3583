// The project's rules, game and engine compiled to WebAssembly (crates/chess-wasm,
// built by the server's build script and served under /wasm/), loaded once per
// page or worker. Everything a local game or the engine decides comes from there:
// the page runs the rules the server enforces.

const GLUE_URL = "/wasm/chess_wasm.js";
const MODULE_URL = "/wasm/chess_wasm_bg.wasm";

let loading = null;

/**
 * The loaded module: `{ LocalGame, Engine }`. `options.glue` is the URL of
 * wasm-bindgen's glue and `options.module` the module's bytes or URL (the
 * server's by default); the tests under Node pass both.
 */
export function loadChess(options = {}) {
  loading ??= (async () => {
    const glue = await import(options.glue ?? GLUE_URL);
    await glue.default({ module_or_path: options.module ?? MODULE_URL });
    return glue;
  })();
  return loading;
}
