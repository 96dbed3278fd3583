// What the engine's worker answers (engine-worker.js wires it to postMessage):
// pure, so the unit tests drive it with the real engine under Node.
//
// Page → worker:   { type: "search", id, request }   request: chess-wasm's SearchRequest
//                  { type: "new_game" }
// Worker → page:   { type: "ready" }
//                  { type: "iteration", id, report }  after each completed depth
//                  { type: "done", id, report }       the search's result
//                  { type: "error", id, message }     a request the engine refused
//
// A search runs to its end once started (the worker is single-threaded); a page
// that no longer wants it ends the worker (engine-client.js does).

/**
 * The worker's message handler over `engine` (a chess-wasm `Engine`), posting
 * answers with `post`.
 */
export function engineHandler(engine, post) {
  return (msg) => {
    switch (msg?.type) {
      case "search": {
        const { id } = msg;
        try {
          const final = engine.search(JSON.stringify(msg.request ?? {}), (report) =>
            post({ type: "iteration", id, report: JSON.parse(report) }),
          );
          post({ type: "done", id, report: JSON.parse(final) });
        } catch (err) {
          post({ type: "error", id, message: String(err?.message ?? err) });
        }
        break;
      }
      case "new_game":
        engine.new_game();
        break;
      default:
        post({ type: "error", id: msg?.id ?? null, message: `unknown request: ${JSON.stringify(msg?.type ?? null)}` });
    }
  };
}

/** A seed for the easy level's choices, different in every worker. */
export function randomSeed(random = Math.random) {
  return Math.floor(random() * 0x1_0000_0000) >>> 0;
}
