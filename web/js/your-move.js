// The games where it is the player's move: which they are, the tab title
// that counts them, how long ago the opponent moved, and which games just
// became the player's move (for a browser notification). Pure functions,
// unit-tested in Node; the home page wires them.

/** The playing games of `games` (a `/api/games/mine` list) where it is your move, longest waiting first. */
export function yourMoveGames(games) {
  return games
    .filter((g) => g.status === "playing" && g.your_turn)
    .sort((a, b) => (a.last_move_at ?? a.updated_at ?? 0) - (b.last_move_at ?? b.updated_at ?? 0));
}

/** `(2) Chess: play online` with a count, the plain title without. */
export function countedTitle(baseTitle, count) {
  const plain = baseTitle.replace(/^\(\d+\) /, "");
  return count > 0 ? `(${count}) ${plain}` : plain;
}

/** How long ago `thenMs` was, in words: `just now`, `5 minutes`, `3 hours`, `2 days`. */
export function sinceText(thenMs, nowMs) {
  if (!Number.isFinite(thenMs)) return "";
  const seconds = Math.max(0, Math.floor((nowMs - thenMs) / 1000));
  if (seconds < 60) return "just now";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? "" : "s"} ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? "" : "s"} ago`;
  const days = Math.floor(hours / 24);
  return `${days} days ago`;
}

/** The ids of `now` (your-move games) that were not your move in `before`. */
export function newlyYourMove(before, now) {
  const known = new Set(before.map((g) => g.game_id));
  return now.filter((g) => !known.has(g.game_id));
}
