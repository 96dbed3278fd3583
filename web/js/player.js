// A player's page `/@/{username}`: their record, ratings (when the server
// has them), and the archive of their finished games, paged by the
// server's cursor and filtered by speed, result and opponent.

import { showAccountLink } from "./header.js";
import { ratingChart } from "./rating-chart.js";
import { timeControlText } from "./api.js";

const $ = (sel) => document.querySelector(sel);

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function getJson(path) {
  const res = await fetch(path, { credentials: "same-origin" });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = new Error(data?.error?.message ?? `HTTP ${res.status}`);
    error.status = res.status;
    throw error;
  }
  return data;
}

function notice(text) {
  const el = $("#player-notice");
  el.hidden = !text;
  el.textContent = text ?? "";
}

const username = decodeURIComponent(location.pathname.replace(/^\/@\//, "").replace(/\/$/, ""));
const base = `/api/players/${encodeURIComponent(username)}`;
let next = null;

const RESULT_TEXT = {
  win: "Won", draw: "Drawn", loss: "Lost", aborted: "Aborted", both_sides: "Played on one screen",
};
const SPEED_TEXT = {
  ultra_bullet: "UltraBullet", bullet: "Bullet", blitz: "Blitz", rapid: "Rapid",
  classical: "Classical", correspondence: "Correspondence",
};

function entryItem(g) {
  const opponent = g.opponent
    ? g.opponent.url
      ? `<a href="${esc(g.opponent.url)}">${esc(g.opponent.name)}</a>`
      : esc(g.opponent.name)
    : "?";
  const date = new Date(g.finished_at).toISOString().slice(0, 10);
  // A one-screen game: the player held both seats, so it has no side and no opponent.
  const bothSides = g.result === "both_sides";
  const title = bothSides ? RESULT_TEXT.both_sides : `${RESULT_TEXT[g.result] ?? g.result} as ${g.color}`;
  return `<li class="archive-entry result-${esc(g.result)}" data-game="${esc(g.game_id)}">
    <a class="review" href="${esc(g.url)}">${esc(title)}</a>
    ${bothSides ? "" : `<span>vs ${opponent}</span>`}
    <span class="muted">${esc(SPEED_TEXT[g.speed] ?? g.speed)}${g.speed === "correspondence" ? "" : ` · ${esc(timeControlText(g.time_control))}`} · ${esc(g.reason.replaceAll("_", " "))} · ${esc(date)}</span>
  </li>`;
}

function filterQuery() {
  const form = $("#archive-filter");
  const params = new URLSearchParams();
  for (const name of ["speed", "result", "vs"]) {
    const value = form[name].value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

/** Loads the first page (`more` false) or the next one. */
async function loadArchive(more) {
  const params = filterQuery();
  // `?per_page=5` on the page's own address sets the page size (1 to 100).
  const perPage = new URLSearchParams(location.search).get("per_page");
  if (perPage) params.set("limit", perPage);
  if (more && next) params.set("before", next);
  try {
    const page = await getJson(`${base}/games?${params}`);
    const list = $("#archive");
    const items = page.games.map(entryItem).join("");
    if (more) list.insertAdjacentHTML("beforeend", items);
    else list.innerHTML = items || `<li class="muted">No games.</li>`;
    next = page.next;
    $("#archive-more").hidden = !next;
  } catch (err) {
    notice(err.message);
  }
}

async function loadRatings() {
  let ratings;
  try {
    ratings = await getJson(`${base}/ratings`);
  } catch {
    return; // no ratings on this server (yet): the section stays hidden
  }
  // Every speed is listed, at 1500 until its first rated game: show those played.
  const speeds = Object.entries(ratings?.ratings ?? {}).filter(
    ([, r]) => r && Number.isFinite(r.rating) && r.games > 0,
  );
  if (speeds.length === 0) return;
  $("#rating-list").innerHTML = speeds
    .map(([speed, r]) => `<div class="rating" data-speed="${esc(speed)}">
      <h3>${esc(SPEED_TEXT[speed] ?? speed)} <span class="rating-value">${esc(Math.round(r.rating))}${r.provisional ? "?" : ""}</span>
      <span class="muted">${esc(r.games)} ${r.games === 1 ? "game" : "games"}</span></h3>
      ${ratingChart(r.history ?? [], { label: `${SPEED_TEXT[speed] ?? speed} rating history` })}
    </div>`)
    .join("");
  $("#ratings").hidden = false;
}

/** The arenas they played, with their rank in each. */
async function loadTournaments() {
  let played;
  try {
    played = (await getJson(`${base}/tournaments`)).tournaments;
  } catch {
    return; // the rest of the page stands without it
  }
  $("#tournaments-card").hidden = played.length === 0;
  $("#tournaments").innerHTML = played
    .map((t) => {
      const date = new Date(t.starts_at).toISOString().slice(0, 10);
      const place = t.rank ? `#${t.rank} of ${t.players} · ${t.score} points` : "";
      return `<li><a href="/tournament/${encodeURIComponent(t.id)}">${esc(t.full_name)}</a>
        <span class="muted">${esc(place)} · ${esc(t.status === "finished" ? date : t.status === "started" ? "playing now" : `starts ${date}`)}</span></li>`;
    })
    .join("");
}

async function main() {
  fetch("/api/me", { credentials: "same-origin" })
    .then((res) => (res.ok ? res.json() : null))
    .then((who) => who && showAccountLink(who))
    .catch(() => {});
  let profile;
  try {
    profile = await getJson(base);
  } catch (err) {
    notice(err.message);
    return;
  }
  document.title = `${profile.username} · Chess`;
  $("#player-name").textContent = profile.username;
  for (const [key, id] of [["games", "#count-games"], ["wins", "#count-wins"], ["draws", "#count-draws"], ["losses", "#count-losses"]]) {
    $(id).textContent = String(profile.counts[key]);
  }
  $("#export-pgn").href = `/api/games/user/${encodeURIComponent(profile.username)}`;
  $("#export-pgn").setAttribute("download", `${profile.username}.pgn`);
  $("#archive-filter").addEventListener("submit", (e) => {
    e.preventDefault();
    loadArchive(false);
  });
  $("#archive-more").addEventListener("click", () => loadArchive(true));
  await Promise.all([loadArchive(false), loadRatings(), loadTournaments()]);
}

main();
