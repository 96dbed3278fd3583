// The home page: create games, the live lobby, and the lists of games.

import * as api from "./api.js";
import { ratingLabel } from "./ratings.js";
import { ReconnectingSocket } from "./socket.js";
import { resultText } from "./game-state.js";
import { showAccountLink } from "./header.js";
import { identityText } from "./account-text.js";
import { goToStartedGame } from "./lobby-follow.js";
import { Sounds } from "./sound.js";
import { countedTitle, newlyYourMove, sinceText, yourMoveGames } from "./your-move.js";
import { refreshArenas, wireArenaForm } from "./home-arenas.js";
import { showClubs } from "./home-clubs.js";
import { loadChess } from "./chess-wasm.js";
import { createLocalGame, localGameSummaries } from "./local-host.js";
import { handOverFinished } from "./local-archive.js";

const $ = (sel) => document.querySelector(sel);
const seeks = new Map();
const sounds = new Sounds();

function notice(text) {
  const el = $("#home-notice");
  el.hidden = !text;
  el.textContent = text ?? "";
}

/** Runs an API action and shows its error plainly instead of failing silently. */
async function attempt(action) {
  try {
    notice(null);
    return await action();
  } catch (err) {
    notice(err instanceof api.ApiError ? `${err.message} (${err.code})` : String(err.message ?? err));
    return null;
  }
}

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function fillTimeSelects() {
  const options = [
    `<option value="corr">No clock</option>`,
    ...api.PRESETS.map((p) => `<option value="${p}">${p}</option>`),
  ].join("");
  for (const sel of document.querySelectorAll(".tc-select")) sel.innerHTML = options;
  $("#seek-tc").innerHTML =
    api.PRESETS.map((p) => `<option value="${p}">${p}</option>`).join("") +
    `<option value="corr">Correspondence</option><option value="custom">Custom…</option>`;
  $("#presets").innerHTML =
    api.PRESETS.map(
      (p) => `<button type="button" data-preset="${p}"><span class="tc">${p}</span><span class="speed">${api.speedName(api.timeControlFromPreset(p))}</span></button>`,
    ).join("") +
    `<button type="button" data-preset="corr"><span class="tc">∞</span><span class="speed">Correspondence</span></button>`;
}

function seekFormTimeControl(form) {
  const choice = form.tc.value;
  if (choice !== "custom") return api.timeControlFromPreset(choice);
  const minutes = Number(form.minutes.value);
  const increment = Number(form.increment.value);
  if (!(minutes > 0) || !(increment >= 0)) throw new Error("Enter minutes above 0 and an increment of 0 or more.");
  return { kind: "clock", initial_ms: Math.round(minutes * 60_000), increment_ms: Math.round(increment * 1000) };
}

function renderSeeks() {
  const body = $("#seeks");
  if (seeks.size === 0) {
    body.innerHTML = `<tr><td colspan="4" class="muted">No open seeks yet.</td></tr>`;
    return;
  }
  body.innerHTML = [...seeks.values()]
    .map(
      (s) => `<tr data-seek="${esc(s.id)}">
        <td>${esc(s.player?.name ?? "?")}${s.rating ? ` ${esc(ratingLabel(s.rating))}` : ""}${s.is_yours ? " (you)" : ""}</td>
        <td>${esc(api.timeControlText(s.time_control))}${s.rated ? " · rated" : ""}${s.rating_range ? ` · ${esc(s.rating_range.join("–"))}` : ""}</td>
        <td>${esc(s.color)}</td>
        <td>${s.is_yours
          ? `<button type="button" data-cancel="${esc(s.id)}">Cancel</button>`
          : `<button type="button" data-join="${esc(s.id)}">Join</button>`}</td>
      </tr>`,
    )
    .join("");
}

const MODE_TEXT = { online: "online", local: "one screen", computer: "computer" };

function gameItem(g) {
  const white = g.players?.white?.name ?? "(open seat)";
  const black = g.players?.black?.name ?? "(open seat)";
  let state = g.status === "finished" ? resultText(g.result) : g.your_turn ? "Your move" : "Playing";
  if (g.status === "open") state = "Waiting for an opponent";
  return `<li class="${g.your_turn ? "your-turn" : ""}"><a href="${esc(g.url)}">${esc(white)} vs ${esc(black)}</a>
    <span class="muted">${esc(api.timeControlText(g.time_control, g.mode))} · ${esc(MODE_TEXT[g.mode] ?? g.mode)} · ${g.moves} moves · ${esc(state)}</span></li>`;
}

// The games where it is your move, as last shown (null before the first list).
let yourMove = null;

function yourMoveItem(g, now) {
  const you = g.your_color === "black" ? "black" : "white";
  const opponent = g.players?.[you === "white" ? "black" : "white"]?.name ?? "?";
  const since = sinceText(g.last_move_at ?? g.updated_at, now);
  return `<li class="your-turn" data-game="${esc(g.game_id)}"><a href="${esc(g.url)}">vs ${esc(opponent)}</a>
    <span class="muted your-move-since">${esc(api.timeControlText(g.time_control, g.mode))} · ${g.moves} moves${since ? ` · moved ${esc(since)}` : ""}</span></li>`;
}

/** Shows the games where it is your move, counts them in the tab title, and notifies the new ones. */
function showYourMove(games) {
  const waiting = yourMoveGames(games);
  const now = Date.now();
  $("#your-move").innerHTML = waiting.length
    ? waiting.map((g) => yourMoveItem(g, now)).join("")
    : `<li class="muted">No game is waiting for you.</li>`;
  $("#your-move-count").textContent = waiting.length ? `(${waiting.length})` : "";
  document.title = countedTitle(document.title, waiting.length);
  if (yourMove !== null) {
    for (const g of newlyYourMove(yourMove, waiting)) notifyMove(g);
  }
  yourMove = waiting;
}

/** A browser notification that an opponent moved in `g`, when the player allowed them. */
function notifyMove(g) {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const you = g.your_color === "black" ? "black" : "white";
  const opponent = g.players?.[you === "white" ? "black" : "white"]?.name ?? "Your opponent";
  const shown = new Notification("Your move", { body: `${opponent} moved.`, tag: `move-${g.game_id}` });
  shown.onclick = () => {
    window.focus();
    location.assign(g.url);
  };
  document.body.dataset.notified = String(Number(document.body.dataset.notified ?? 0) + 1);
}

function offerNotifications() {
  const button = $("#notify-moves");
  if (typeof Notification === "undefined" || Notification.permission !== "default") return;
  button.hidden = false;
  // Asked on the player's click only: browsers refuse (and may block) a request without one.
  button.addEventListener("click", async () => {
    await Notification.requestPermission();
    button.hidden = Notification.permission === "default";
  });
}

let refreshing = null;
/** Rereads the lists when an opponent moved; moves close together cause one reread. */
function refreshSoon() {
  if (refreshing) return;
  refreshing = setTimeout(async () => {
    refreshing = null;
    await refreshLists();
  }, 200);
}

/** This browser's own games (computer, one screen), for the "Your games" list; none when the rules do not load. */
async function browserGames() {
  try {
    return localGameSummaries(await loadChess(), localStorage, Date.now());
  } catch {
    return [];
  }
}

async function refreshLists() {
  // Without the server (offline) the games of this browser are still listed.
  const [mine, here] = await Promise.all([attempt(api.myGames), browserGames()]);
  if (mine) showYourMove(mine.games);
  const games = [...here, ...(mine?.games ?? [])];
  if (mine || here.length) {
    $("#my-games").innerHTML = games.length ? games.map(gameItem).join("") : `<li class="muted">None yet.</li>`;
  }
  const live = await attempt(api.liveGames);
  if (live) {
    $("#live-games").innerHTML = live.games.length ? live.games.map(gameItem).join("") : `<li class="muted">None right now.</li>`;
  }
}

/** A preset of the time selects as the rules crate writes it (`5+3`, `correspondence`). */
function presetText(preset) {
  return preset === "corr" ? "correspondence" : preset;
}

function go(url) {
  location.assign(url);
}

function wire() {
  $("#presets").addEventListener("click", async (e) => {
    const preset = e.target.closest("[data-preset]")?.dataset.preset;
    if (!preset) return;
    const res = await attempt(() => api.createSeek(api.timeControlFromPreset(preset), "random"));
    if (res?.outcome === "joined") go(res.url);
    else if (res?.seek) {
      seeks.set(res.seek.id, res.seek);
      renderSeeks();
      notice(`Seek created (${preset}). The game starts when someone joins.`);
    }
  });
  $("#seek-form").addEventListener("change", (e) => {
    if (e.target.name === "tc") $("#seek-form").classList.toggle("show-custom", e.target.value === "custom");
  });
  $("#seek-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const res = await attempt(() => api.createSeek(seekFormTimeControl(form), form.color.value, Boolean(form.rated?.checked)));
    if (res?.outcome === "joined") go(res.url);
    else if (res?.seek) {
      seeks.set(res.seek.id, res.seek);
      renderSeeks();
    }
  });
  $("#seeks").addEventListener("click", async (e) => {
    const join = e.target.closest("[data-join]")?.dataset.join;
    const cancel = e.target.closest("[data-cancel]")?.dataset.cancel;
    if (join) {
      const res = await attempt(() => api.joinSeek(join));
      if (res) go(res.url);
    } else if (cancel) {
      const cancelled = await attempt(async () => {
        await api.cancelSeek(cancel);
        return true;
      });
      if (cancelled) {
        seeks.delete(cancel);
        renderSeeks();
      }
    }
  });
  // The computer and one-screen games run in this browser (the rules and the
  // engine in WebAssembly), kept in its storage: no server, no network needed.
  $("#computer-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const you = f.color.value === "random" ? (Math.random() < 0.5 ? "white" : "black") : f.color.value;
    const opponent = { kind: "computer", level: Number(f.level.value), color: you === "white" ? "black" : "white" };
    const url = await attempt(async () => createLocalGame(await loadChess(), localStorage, { opponent, timeControl: presetText(f.tc.value) }));
    if (url) go(url);
  });
  $("#friend-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const res = await attempt(() => api.createChallenge(api.timeControlFromPreset(f.tc.value), f.color.value, Boolean(f.rated?.checked)));
    if (!res) return;
    const url = new URL(res.url, location.origin).href;
    $("#challenge").hidden = false;
    $("#challenge-url").value = url;
    $("#challenge-open").href = res.url;
  });
  $("#challenge-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("#challenge-url").value);
      notice("Link copied: send it to your friend.");
    } catch {
      $("#challenge-url").select();
      notice("Copy the selected link and send it to your friend.");
    }
  });
  $("#local-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const timeControl = presetText(e.currentTarget.tc.value);
    const url = await attempt(async () => createLocalGame(await loadChess(), localStorage, { opponent: { kind: "one_screen" }, timeControl }));
    if (url) go(url);
  });
}

function connectLobby() {
  const socket = new ReconnectingSocket(api.socketUrl("/api/lobby/socket"), {
    hello: () => ({ type: "ping", t: Date.now() }),
    onStatus: (status) => {
      document.body.dataset.lobby = status;
      $("#lobby-state").textContent = status === "open" ? "· live" : status === "down" ? "· reconnecting…" : "";
    },
    onMessage: (msg) => {
      if (msg.type === "seeks") {
        seeks.clear();
        for (const s of msg.seeks) seeks.set(s.id, s);
      } else if (msg.type === "seek_added") {
        seeks.set(msg.seek.id, msg.seek);
      } else if (msg.type === "seek_removed") {
        seeks.delete(msg.seek_id);
      } else if (msg.type === "moved") {
        refreshSoon();
        return;
      } else if (msg.type === "game_started") {
        goToStartedGame(msg, { sounds });
        return;
      } else {
        return;
      }
      renderSeeks();
    },
  });
  socket.connect();
}

async function main() {
  fillTimeSelects();
  wire();
  const who = await attempt(api.me);
  if (who) {
    $("#me").textContent = identityText(who);
    showAccountLink(who);
  }
  if (who?.kind === "account") {
    // Games finished here while offline (or before signing in) reach the archive now.
    loadChess()
      .then((chess) => handOverFinished({ chess, storage: localStorage, username: who.name, upload: api.uploadGame }))
      .catch(() => {});
  }
  wireArenaForm(who, notice);
  showClubs(who, notice);
  offerNotifications();
  connectLobby();
  await refreshLists();
  setInterval(refreshLists, 10_000);
  await refreshArenas(notice);
  setInterval(() => refreshArenas(notice), 10_000);
}

main();
