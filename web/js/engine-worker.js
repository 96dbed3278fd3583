// The engine's Web Worker: the WebAssembly engine searches here, so the page
// never freezes while the computer thinks or the analysis board looks ahead.
// The protocol is engine-protocol.js's.

import { loadChess } from "./chess-wasm.js";
import { engineHandler, randomSeed } from "./engine-protocol.js";

// Messages that arrive while the module loads wait for it.
const waiting = [];
let handle = (msg) => waiting.push(msg);
self.onmessage = (e) => handle(e.data);

loadChess().then(
  (chess) => {
    handle = engineHandler(new chess.Engine(randomSeed()), (msg) => self.postMessage(msg));
    self.postMessage({ type: "ready" });
    for (const msg of waiting.splice(0)) handle(msg);
  },
  (err) => {
    handle = (msg) => self.postMessage({ type: "error", id: msg?.id ?? null, message: `the engine did not load: ${err}` });
    for (const msg of waiting.splice(0)) handle(msg);
  },
);
