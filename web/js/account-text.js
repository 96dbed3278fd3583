// What the account and rewards page says: money from integer cents, plain
// messages for the server's account error codes, and reward entries. Pure
// functions, so they are unit-tested without a browser.

/** The daily cap the server applies (docs/rewards.md); the server's own figure wins when it sends one. */
export const DEFAULT_CAP_CENTS = 500;

/**
 * Integer cents as dollars: 100 -> "$1.00", 5 -> "$0.05", 0 -> "$0.00".
 * Integer arithmetic only, so no floating-point rounding can show.
 * Throws on anything but a safe integer: a wrong amount must not look right.
 */
export function formatCents(cents) {
  if (!Number.isSafeInteger(cents)) throw new TypeError(`amount in cents must be an integer, got ${cents}`);
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const dollars = Math.floor(abs / 100);
  const rest = String(abs % 100).padStart(2, "0");
  return `${sign}$${dollars}.${rest}`;
}

/** A wait in seconds in words: 1 -> "1 second", 90 -> "2 minutes", 3600 -> "1 hour". */
export function waitText(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  const plural = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (s < 60) return plural(s, "second");
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return plural(minutes, "minute");
  return plural(Math.ceil(minutes / 60), "hour");
}

/** The server's own message with a capital letter and a full stop, as a sentence on the page. */
function sentence(text) {
  const t = String(text ?? "").trim();
  if (!t) return "";
  const capital = t[0].toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * The message to show for a failed account request. `error` is an `ApiError`
 * (status, code, message, retryAfter in seconds or null); `action` is what was
 * attempted: "sign-up", "sign-in", "password", "first-password" (a class
 * account choosing its own) or "load", because the same code
 * means different things to the person (a wrong *current* password when
 * changing it is `invalid_credentials` too).
 */
export function accountErrorText(error, action) {
  switch (error?.code) {
    // The server says exactly which rule was broken: show its words.
    case "invalid_username":
      return sentence(error.message) || "This username is not allowed.";
    case "invalid_password":
      return sentence(error.message) || "This password is not allowed.";
    case "username_taken":
      return "This username is taken (letter case does not matter). Choose another one.";
    case "already_an_account":
      return "This browser is already signed in to an account. Sign out first to create another one.";
    case "invalid_credentials":
      if (action === "password") return "The current password is wrong.";
      if (action === "first-password") return "The password from your sheet is wrong: sign in again with it.";
      return "Wrong username or password.";
    case "password_already_chosen":
      return "This account already has its own password: sign in with it.";
    case "not_signed_in":
      return "You are not signed in (the session ended). Sign in again.";
    case "too_many_requests":
      return error.retryAfter != null
        ? `Too many attempts. Try again in ${waitText(error.retryAfter)}.`
        : "Too many attempts. Wait a while and try again.";
    default:
      return sentence(error?.message) || "Something went wrong. Try again.";
  }
}

/** The header link's text: the username when signed in, else "Sign in". */
export function accountLinkText(who) {
  return who?.kind === "account" ? who.name : "Sign in";
}

/** The home page's identity line. */
export function identityText(who) {
  return who?.kind === "account" ? `You are ${who.name}` : `You are ${who?.name ?? "a guest"} (guest)`;
}

/** A reward entry's status in plain words, with the reason when it paid nothing. */
export function rewardStatusText(entry, capCents = DEFAULT_CAP_CENTS) {
  if (entry.status === "credited") return "Credited";
  if (entry.status === "over_cap") {
    return `Not paid: over the cap (${formatCents(capCents)} already paid on ${entry.day}, UTC)`;
  }
  return `Unknown status '${entry.status}'`;
}

/**
 * How a credited reward's request to the host platform went, in plain words
 * (docs/rewards.md, "Delivery to the host platform"); "" when the server
 * sends none (no platform configured, or an over-cap entry that owes nothing).
 */
export function deliveryText(entry) {
  const delivery = entry.delivery;
  if (!delivery) return "";
  if (delivery.state === "delivered") return "Sent to the platform";
  if (delivery.state === "pending") return "Being sent to the platform";
  if (delivery.state === "refused") {
    return delivery.reason ? `Refused by the platform: ${delivery.reason}` : "Refused by the platform";
  }
  return `Unknown delivery '${delivery.state}'`;
}

/** Today's line: "$1.00 of $5.00 today (UTC 2026-11-29)". */
export function todayText(rewards) {
  return `${formatCents(rewards.total_cents)} of ${formatCents(rewards.cap_cents)} today (UTC ${rewards.day})`;
}
