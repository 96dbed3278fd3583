// Hands this browser's finished games (computer, one screen) to the server,
// so a signed-in player's archive and export stay complete
// (POST /api/games/played-here; the server replays every move before it keeps
// one). Each game is handed over once: what the server kept or refused is
// remembered; a game that could not be sent (offline, the server busy) is
// tried again next time.

import { INDEX_KEY, storageKey } from "./local-host.js";

/** Ids of the games the server has answered for (kept or refused). */
export const HANDED_OVER_KEY = "chess.local.handed-over";

function readIds(storage, key) {
  try {
    const ids = JSON.parse(storage.getItem(key) ?? "[]");
    return Array.isArray(ids) ? ids : [];
  } catch {
    return [];
  }
}

/** PGN's White and Black of a game of this browser, as the server expects them. */
function sideNames(state, username) {
  const name = (color) => (state.players[color].kind === "computer" ? state.players[color].name : username);
  return { white: name("white"), black: name("black") };
}

/**
 * Sends every finished game of this browser not yet handed over, for the
 * account `username`; `upload(body)` posts it (api.uploadGame) and rejects
 * with an ApiError. Resolves with `{ kept, refused }` counts.
 */
export async function handOverFinished({ chess, storage, username, upload }) {
  const done = new Set(readIds(storage, HANDED_OVER_KEY));
  let kept = 0;
  let refused = 0;
  for (const id of readIds(storage, INDEX_KEY)) {
    if (done.has(id)) continue;
    const text = storage.getItem(storageKey(id));
    if (text === null) continue;
    let state;
    let game = null;
    try {
      game = chess.LocalGame.restore(text);
      state = JSON.parse(game.state(Date.now()));
    } catch {
      continue;
    } finally {
      game?.free();
    }
    // An aborted game never began: nothing to keep.
    if (state.status !== "finished" || state.result?.reason === "aborted") continue;
    try {
      await upload({ game: JSON.parse(text), ...sideNames(state, username) });
      kept += 1;
    } catch (err) {
      // A refusal is final; no answer, a lapsed session (401) or a busy
      // server (429, 5xx) is tried again later.
      const status = typeof err?.status === "number" ? err.status : 0;
      if (status < 400 || status >= 500 || status === 401 || status === 429) break;
      refused += 1;
    }
    done.add(id);
    storage.setItem(HANDED_OVER_KEY, JSON.stringify([...done]));
  }
  return { kept, refused };
}
