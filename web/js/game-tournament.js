// The game page's line about the arena a game belongs to: its name, a link
// back to the tournament page and the time the arena has left (a game that
// ends after the arena counts nothing, so players want to see it). Once
// the game is over the page keeps the player in the arena's pool, as the
// tournament page does, and opens their next game as soon as they are
// paired again.

import { countdownText } from "./arena-text.js";

const NEXT_GAME_POLL_MS = 2_000;

let arena = null;
let shownFor = null;
let timer = null;
let polling = false;

async function loadArena(gameId) {
  const res = await fetch(`/api/games/${encodeURIComponent(gameId)}/tournament`, { credentials: "same-origin" });
  return res.ok ? res.json() : null;
}

/** Asks the arena (which marks the player there) until it pairs them again. */
async function waitForNextGame(gameId) {
  if (!arena || arena.status === "finished") return;
  try {
    const res = await fetch(`/api/arenas/${encodeURIComponent(arena.id)}`, { credentials: "same-origin" });
    const view = res.ok ? await res.json() : null;
    const next = view?.me?.game_id;
    if (next && next !== gameId) {
      location.assign(`/game/${next}`);
      return;
    }
    if (view?.status === "finished" || view?.me?.joined === false) return;
  } catch {
    // A missed answer: ask again.
  }
  setTimeout(() => waitForNextGame(gameId), NEXT_GAME_POLL_MS);
}

/**
 * Shows the arena of game `gameId` (its state says `mandatory`); once
 * `finished`, waits for the player's next game in it.
 */
export async function showTournament(gameId, finished, doc = document) {
  if (shownFor !== gameId) {
    shownFor = gameId;
    try {
      arena = await loadArena(gameId);
    } catch {
      arena = null;
    }
    if (!arena) return;
    const skew = arena.now - Date.now();
    const link = doc.querySelector("#tournament-link");
    link.href = `/tournament/${encodeURIComponent(arena.id)}`;
    link.textContent = arena.full_name;
    doc.querySelector("#tournament-banner").hidden = false;
    const left = doc.querySelector("#tournament-left");
    const tick = () => {
      const ms = arena.ends_at - (Date.now() + skew);
      left.textContent = arena.status === "finished" || ms <= 0 ? "· over" : `· ${countdownText(ms)} left`;
    };
    tick();
    clearInterval(timer);
    timer = setInterval(tick, 1000);
  }
  if (finished && arena && !polling) {
    polling = true;
    waitForNextGame(gameId);
  }
}
