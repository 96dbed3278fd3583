// HTTP calls to the server (docs/protocol.md, "HTTP API").

/**
 * An HTTP error from the server, with its stable code and, for
 * `too_many_requests`, the `Retry-After` wait in seconds (else null).
 */
export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** `Retry-After` in seconds; null when absent or an HTTP date (the server sends seconds). */
export function retryAfterSeconds(header) {
  if (header == null || !/^\s*\d+\s*$/.test(header)) return null;
  return Number(header);
}

async function request(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data?.error;
    throw new ApiError(
      res.status,
      err?.code ?? "http_error",
      err?.message ?? `HTTP ${res.status}`,
      retryAfterSeconds(res.headers.get("retry-after")),
    );
  }
  return data;
}

/** Who am I (creates a guest identity on the first visit). Call first on every page. */
export const me = () => request("GET", "/api/me");
export const listSeeks = () => request("GET", "/api/lobby/seeks");
export const createSeek = (timeControl, color, rated = false) =>
  request("POST", "/api/lobby/seeks", { time_control: timeControl, color, rated });
export const joinSeek = (id) => request("POST", `/api/lobby/seeks/${encodeURIComponent(id)}/join`);
export const cancelSeek = (id) => request("DELETE", `/api/lobby/seeks/${encodeURIComponent(id)}`);
export const createChallenge = (timeControl, color, rated = false) =>
  request("POST", "/api/challenges", { time_control: timeControl, color, rated });
export const joinGame = (id) => request("POST", `/api/games/${encodeURIComponent(id)}/join`);
export const createLocalGame = (timeControl) =>
  request("POST", "/api/games/local", { time_control: timeControl });
export const createComputerGame = (level, color, timeControl) =>
  request("POST", "/api/games/computer", { level, color, time_control: timeControl });
/** A finished game of this browser, for the signed-in player's archive. */
export const uploadGame = (body) => request("POST", "/api/games/played-here", body);
export const myGames = () => request("GET", "/api/games/mine");
export const liveGames = () => request("GET", "/api/games/live");
export const gameRatings = (id) => request("GET", `/api/games/${encodeURIComponent(id)}/ratings`);
export const playerRatings = (username) => request("GET", `/api/players/${encodeURIComponent(username)}/ratings`);
export const pgnUrl = (id) => `/api/games/${encodeURIComponent(id)}/pgn`;

// Accounts and rewards (docs/protocol.md, "Accounts" and "Rewards").
export const signUp = (username, password) => request("POST", "/api/account/sign-up", { username, password });
export const signIn = (username, password) => request("POST", "/api/account/sign-in", { username, password });
export const signOut = () => request("POST", "/api/account/sign-out");
/** How people sign in here: `{ local, platform: { name, start } | null }`. */
export const signInOptions = () => request("GET", "/api/account/sign-in-options");
/** A class account's first sign-in: its own password replaces the one on its sheet. */
export const firstPassword = (username, password, newPassword) =>
  request("POST", "/api/account/first-password", { username, password, new_password: newPassword });
export const changePassword = (currentPassword, newPassword) =>
  request("POST", "/api/account/password", { current_password: currentPassword, new_password: newPassword });
export const account = () => request("GET", "/api/account");
export const rewards = () => request("GET", "/api/account/rewards");
export const listTokens = () => request("GET", "/api/account/tokens");
export const createToken = (description, scopes) => request("POST", "/api/account/tokens", { description, scopes });
export const revokeToken = (id) => request("DELETE", `/api/account/tokens/${encodeURIComponent(id)}`);

/** The ws:// or wss:// URL of a server path on this origin. */
export function socketUrl(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

/** Time-control presets offered in the UI, as "minutes+seconds". */
export const PRESETS = ["1+0", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0"];

/** "3+2" -> a protocol time control; "corr" -> correspondence. */
export function timeControlFromPreset(preset) {
  if (preset === "corr") return { kind: "correspondence" };
  const m = /^(\d+)\+(\d+)$/.exec(preset);
  if (!m) throw new Error(`unknown preset '${preset}'`);
  return { kind: "clock", initial_ms: Number(m[1]) * 60_000, increment_ms: Number(m[2]) * 1000 };
}

/**
 * Short text for a time control: "3+2", "0.5+0", or without a clock
 * "Correspondence" between two people and "No clock" on one screen or
 * against the computer (nobody waits days for those moves).
 */
export function timeControlText(tc, mode = "online") {
  if (!tc || tc.kind !== "clock") return mode === "online" ? "Correspondence" : "No clock";
  return `${tc.initial_ms / 60_000}+${tc.increment_ms / 1000}`;
}

/**
 * The usual name of a time control's speed, from the time a 40-move game
 * takes each side (initial time + 40 increments), as chess sites name them.
 */
export function speedName(tc) {
  if (!tc || tc.kind !== "clock") return "Correspondence";
  const minutes = (tc.initial_ms + 40 * tc.increment_ms) / 60_000;
  if (minutes < 3) return "Bullet";
  if (minutes < 8) return "Blitz";
  if (minutes < 25) return "Rapid";
  return "Classical";
}

/** Theme (piece colours) remembered by the browser. */
export const THEME_KEY = "chess.theme";
export function applyStoredTheme(doc = document) {
  const theme = localStorage.getItem(THEME_KEY) === "classic" ? "classic" : "candy";
  doc.documentElement.dataset.theme = theme;
  return theme;
}
export function setTheme(theme, doc = document) {
  localStorage.setItem(THEME_KEY, theme);
  doc.documentElement.dataset.theme = theme;
}
