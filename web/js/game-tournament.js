// The game page's line about the arena a game belongs to: its name, a link
// back to the tournament page and the time the arena has left (a game that
// ends after the arena counts nothing, so players want to see it).

import { countdownText } from "./arena-text.js";

let shownFor = null;
let timer = null;

/** Shows the arena of game `gameId` once (the game's state says `mandatory`). */
export async function showTournament(gameId, doc = document) {
  if (shownFor === gameId) return;
  shownFor = gameId;
  let arena;
  try {
    const res = await fetch(`/api/games/${encodeURIComponent(gameId)}/tournament`, { credentials: "same-origin" });
    if (!res.ok) return;
    arena = await res.json();
  } catch {
    return;
  }
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
