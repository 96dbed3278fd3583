// An arena's page `/tournament/{id}`: its terms, the countdown, join,
// withdraw (a pause once it runs), the live standings (paged, with fire, berserk and null-draw
// marks), the podium at the end; a player who is paired is taken to the
// game at once (the lobby socket's `game_started`, the poll as a fallback).
// The page asks the server for the table every two seconds: any node
// answers from the stored rows, so every node shows the same table.

import { me } from "./api.js";
import { showAccountLink } from "./header.js";
import { followLobby } from "./lobby-follow.js";
import { Sounds } from "./sound.js";
import { countdownText, phase, sheetGame, termsText } from "./arena-text.js";

const $ = (sel) => document.querySelector(sel);
const POLL_MS = 2_000;

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const id = decodeURIComponent(location.pathname.replace(/^\/tournament\//, "").replace(/\/$/, ""));
const base = `/api/arenas/${encodeURIComponent(id)}`;
/** The page of standings the reader chose; null follows their own line. */
let chosenPage = null;
let arena = null;
/** Server time minus this browser's, so the countdown follows the server. */
let skew = 0;
/** Games this tab was already sent to, so coming back does not bounce. */
const SEEN_KEY = `arena-games-seen:${id}`;

function notice(text) {
  const el = $("#arena-notice");
  el.hidden = !text;
  el.textContent = text ?? "";
}

async function call(method, path) {
  const res = await fetch(path, { method, credentials: "same-origin" });
  if (res.ok) return res.status === 204 ? null : res.json();
  const data = await res.json().catch(() => null);
  throw new Error(data?.error?.message ?? `HTTP ${res.status}`);
}

function seenGames() {
  try {
    return new Set(JSON.parse(sessionStorage.getItem(SEEN_KEY) ?? "[]"));
  } catch {
    return new Set();
  }
}

function markSeen(gameId) {
  const seen = seenGames();
  seen.add(gameId);
  sessionStorage.setItem(SEEN_KEY, JSON.stringify([...seen]));
}

function standingRow(line, own) {
  const games = line.games
    .map((game) => {
      const shown = sheetGame(game);
      return `<span class="${shown.classes.join(" ")}"${shown.title ? ` title="${esc(shown.title)}"` : ""}>${esc(shown.text)}${game.berserk ? "⚡" : ""}</span>`;
    })
    .join("");
  const name = `<a href="/@/${encodeURIComponent(line.username)}">${esc(line.username)}</a>`;
  return `<tr class="${own ? "own" : ""}${line.withdrawn ? " withdrawn" : ""}">
    <td>${line.rank}</td>
    <td>${name}${line.withdrawn ? ' <span class="muted">(withdrawn)</span>' : ""}</td>
    <td>${line.rating}</td>
    <td class="sheet">${games}</td>
    <td class="score">${line.score}${line.fire ? ' <span title="on fire">🔥</span>' : ""}</td>
    <td>${line.performance ?? ""}</td>
  </tr>`;
}

function renderStandings(view, myName) {
  const { lines, page, pages } = view.standings;
  $("#standings").innerHTML = lines.length
    ? lines.map((line) => standingRow(line, line.username === myName)).join("")
    : '<tr><td colspan="6" class="muted">Nobody has joined yet.</td></tr>';
  $("#standings-page").textContent = pages > 1 ? `page ${page} of ${pages}` : "";
  $("#standings-prev").disabled = page <= 1;
  $("#standings-next").disabled = page >= pages;
  $("#standings-prev").hidden = $("#standings-next").hidden = pages <= 1;
  $("#arena-players").textContent = `(${view.players} player${view.players === 1 ? "" : "s"})`;
}

function renderPodium(view) {
  const card = $("#arena-podium-card");
  card.hidden = !view.podium;
  if (!view.podium) return;
  const medals = ["🥇", "🥈", "🥉"];
  $("#arena-podium").innerHTML = view.podium
    .map((line, index) => `<li><span class="medal">${medals[index]}</span>
      <a href="/@/${encodeURIComponent(line.username)}">${esc(line.username)}</a>
      <strong>${line.score}</strong> points
      <span class="muted">${line.games.length} games${line.performance != null ? `, performance ${line.performance}` : ""}</span></li>`)
    .join("");
}

function renderMe(view, who) {
  const signedIn = who?.kind === "account";
  const mine = view.me ?? { joined: false };
  const open = view.status !== "finished";
  $("#arena-sign-in").hidden = signedIn || !open;
  $("#arena-join").hidden = !signedIn || !open || mine.joined;
  $("#arena-withdraw").hidden = !signedIn || !open || !mine.joined;
  // Once it runs, leaving keeps the score and one may come back: a pause.
  $("#arena-withdraw").textContent = view.status === "started" ? "Pause" : "Withdraw";
  $("#arena-terminate").hidden = !mine.organiser || !open;
  const game = $("#arena-game");
  game.hidden = !mine.game_id;
  if (mine.game_id) game.href = `/game/${mine.game_id}`;
  let text = "";
  if (mine.joined && view.status === "created") text = "You are in: you will be paired when it starts.";
  else if (mine.joined && mine.game_id) text = "You are playing.";
  else if (mine.joined && mine.paused_until) text = "Paused (a pause, or a first move not made in time): you are back in the pool soon.";
  else if (mine.joined && open) text = "Waiting for an opponent…";
  else if (mine.withdrawn && open) text = "You paused: your score stays. Join again to play on; each pause makes the wait to be paired again a little longer.";
  $("#arena-me").textContent = text;
  // A new game of this player: go to it now (once per game, so the back
  // button leads here again without bouncing).
  if (mine.game_id && !seenGames().has(mine.game_id)) {
    markSeen(mine.game_id);
    location.assign(`/game/${mine.game_id}`);
  }
}

function tick() {
  if (!arena) return;
  const now = Date.now() + skew;
  const { label, ms } = phase(arena, now);
  $("#arena-phase").textContent = label;
  $("#arena-countdown").textContent = ms == null ? "" : countdownText(ms);
}

let who = null;

async function refresh() {
  const query = chosenPage ? `?page=${chosenPage}` : "";
  const view = await call("GET", `${base}${query}`);
  arena = view;
  skew = view.now - Date.now();
  document.title = `${view.full_name} · Chess`;
  $("#arena-name").textContent = view.full_name;
  $("#arena-terms").textContent = `${termsText(view)} · by ${view.created_by}`;
  renderMe(view, who);
  renderStandings(view, who?.name);
  renderPodium(view);
  tick();
  return view;
}

async function act(action) {
  notice(null);
  try {
    await call("POST", `${base}/${action}`);
    await refresh();
  } catch (error) {
    notice(error.message);
  }
}

/** Whether the notice shown is the poll's own (so the next success clears it). */
let loadFailed = false;

async function poll() {
  let view = null;
  try {
    view = await refresh();
    if (loadFailed) notice(null);
    loadFailed = false;
  } catch (error) {
    notice(`Could not load the arena: ${error.message}`);
    loadFailed = true;
  }
  // A finished arena changes no more (but for games still ending).
  if (view?.status !== "finished" || view.ongoing > 0) setTimeout(poll, POLL_MS);
}

async function main() {
  try {
    who = await me();
  } catch {
    who = null;
  }
  showAccountLink(who);
  $("#arena-join").addEventListener("click", () => act("join"));
  $("#arena-withdraw").addEventListener("click", () => act("withdraw"));
  $("#arena-terminate").addEventListener("click", () => {
    if (confirm("End the arena now? Games still being played will not count.")) act("terminate");
  });
  $("#standings-prev").addEventListener("click", () => {
    chosenPage = Math.max(1, (arena?.standings.page ?? 1) - 1);
    refresh().catch((error) => notice(error.message));
  });
  $("#standings-next").addEventListener("click", () => {
    chosenPage = (arena?.standings.page ?? 1) + 1;
    refresh().catch((error) => notice(error.message));
  });
  // The server tells this page's lobby socket the moment its player is
  // paired (on whichever node paired them); the poll stays for the standings.
  followLobby({
    sounds: new Sounds(),
    stay: (gameId) => {
      const seen = seenGames().has(gameId);
      markSeen(gameId);
      return seen;
    },
  });
  setInterval(tick, 500);
  poll();
}

main();
