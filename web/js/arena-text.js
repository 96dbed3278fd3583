// What the arena pages say, as pure functions (tested in test/arena-text.test.js):
// the clock, the countdown, the phase and each game of a standings sheet.

/** "3+2" from an arena's clock in seconds (a quarter minute is "¼"). */
export function arenaClockText(clock) {
  const minutes = clock.base_s / 60;
  const fractions = { 0.25: "¼", 0.5: "½", 0.75: "¾" };
  const base = fractions[minutes] ?? String(minutes);
  return `${base}+${clock.increment_s}`;
}

/** "1:05:09", "4:09" or "0:07" for a duration in milliseconds (never negative). */
export function countdownText(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/**
 * What the countdown counts to at `now` (server time): the start, the end,
 * or nothing once the arena is over.
 */
export function phase(arena, now) {
  if (arena.status === "finished") return { label: "Finished", ms: null };
  if (arena.status === "created") return { label: "Starts in", ms: arena.starts_at - now };
  return { label: "Ends in", ms: arena.ends_at - now };
}

/**
 * One game of a sheet as the standings show it: its points, and the
 * classes and title that mark a doubled game (on fire), a draw that scored
 * nothing, and a berserk.
 */
export function sheetGame(game) {
  const classes = ["sheet-game"];
  const notes = [];
  if (game.mark === "double") {
    classes.push("double");
    notes.push("on fire: doubled");
  }
  if (game.mark === "null") {
    classes.push("null");
    notes.push("a draw that scored nothing");
  }
  if (game.berserk) {
    classes.push("berserk");
    notes.push(game.berserk_bonus ? "berserked: +1" : "berserked");
  }
  return { text: String(game.points), classes, title: notes.join(", ") };
}

/** "Rated · Blitz 3+2 · 45 minutes · berserk allowed" for an arena's terms. */
export function termsText(arena) {
  const parts = [
    arena.rated ? "Rated" : "Casual",
    `${arena.perf[0].toUpperCase()}${arena.perf.slice(1)} ${arenaClockText(arena.clock)}`,
    `${Math.round((arena.ends_at - arena.starts_at) / 60_000)} minutes`,
  ];
  if (arena.berserkable) parts.push("berserk allowed");
  if (!arena.streaks) parts.push("no streaks");
  if (arena.min_rating != null) parts.push(`rated ${arena.min_rating} or more`);
  if (arena.max_rating != null) parts.push(`rated ${arena.max_rating} or less`);
  if (arena.club_id) parts.push(`club ${arena.club_id} only`);
  return parts.join(" · ");
}
