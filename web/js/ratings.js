// Ratings as pages show them (docs/protocol.md, "Ratings"): headless, so
// the unit tests run them without a DOM.

/** `1523`, or `1523?` while provisional; "" for no rating (a guest). */
export function ratingLabel(rating) {
  if (!rating || typeof rating.rating !== "number") return "";
  return `${rating.rating}${rating.provisional ? "?" : ""}`;
}

/** A change as shown at the end of a rated game: `+7`, `-7`, `±0`; "" for none. */
export function changeLabel(change) {
  if (typeof change !== "number") return "";
  if (change > 0) return `+${change}`;
  if (change < 0) return `${change}`;
  return "±0";
}

/**
 * What to fetch the ratings again on: a game's ratings change only when its
 * seats fill or it ends.
 */
export function ratingsKey(game) {
  if (!game) return "";
  return [game.game_id, game.status, game.players?.white?.id ?? "", game.players?.black?.id ?? ""].join("|");
}

const PERF_NAMES = [
  ["bullet", "Bullet"],
  ["blitz", "Blitz"],
  ["rapid", "Rapid"],
  ["classical", "Classical"],
  ["correspondence", "Correspondence"],
];

/**
 * An account's ratings as the account page lists them, from
 * `GET /api/players/{username}/ratings`: each speed in the order lichess uses,
 * `{name, label, games}` (`label` as `ratingLabel`). Speeds never played stay
 * at the provisional 1500 and are listed too, so a new account sees where it starts.
 */
export function ratingsSummary(answer) {
  const ratings = answer?.ratings ?? {};
  return PERF_NAMES.filter(([code]) => ratings[code]).map(([code, name]) => ({
    name,
    label: ratingLabel(ratings[code]),
    games: ratings[code].games ?? 0,
  }));
}
