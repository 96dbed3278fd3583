// A club's page `/club/{id}`: who leads it and who is in it, its arenas,
// joining (at once, on request, or through the invitation link's
// `?code=`), leaving, and for its leaders the requests to answer, the
// members to remove or make leaders, the invitation link and a form for
// the members' arenas and its class accounts, printed as a sheet of slips
// and downloaded as CSV (docs/protocol.md, "Clubs" and "Classes").

import { me } from "./api.js";
import { showAccountLink } from "./header.js";
import { arenaFormBody, arenaItem } from "./arena-list.js";
import { classCount, classCsv, pupilNames, sheetRows } from "./class-sheet.js";

const $ = (sel) => document.querySelector(sel);

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const id = decodeURIComponent(location.pathname.replace(/^\/club\//, "").replace(/\/$/, ""));
const code = new URLSearchParams(location.search).get("code");
const base = `/api/clubs/${encodeURIComponent(id)}`;

function notice(text) {
  const el = $("#club-notice");
  el.hidden = !text;
  el.textContent = text ?? "";
}

async function call(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.ok) return res.status === 204 ? null : res.json();
  const data = await res.json().catch(() => null);
  throw new Error(data?.error?.message ?? `HTTP ${res.status}`);
}

async function act(method, path, body) {
  notice(null);
  try {
    const answer = await call(method, path, body);
    await refresh();
    return answer;
  } catch (error) {
    notice(error.message);
    return null;
  }
}

const ADMISSION_TEXT = {
  open: "Anyone with an account may join.",
  request: "A leader accepts each request to join.",
  invitation: "Members join through an invitation link.",
};

function memberItem(member, leading, myName) {
  const name = `<a href="/@/${encodeURIComponent(member.username)}">${esc(member.username)}</a>`;
  const tag = member.leader ? ' <span class="muted">leader</span>' : "";
  let actions = "";
  if (leading && member.username !== myName) {
    actions = `<button type="button" data-leader="${esc(member.username)}" data-to="${!member.leader}">${member.leader ? "No longer a leader" : "Make a leader"}</button>
      <button type="button" data-remove="${esc(member.username)}">Remove</button>`;
  }
  return `<li class="member" data-username="${esc(member.username)}">${name}${tag} ${actions}</li>`;
}

let who = null;

/** A class account as its leaders see it: whether the pupil has signed in, and a new password for one who forgot. */
function rosterItem(account) {
  const state = account.signed_in ? "has signed in" : "not signed in yet";
  return `<li data-username="${esc(account.username)}">${esc(account.username)} <span class="muted">${state}</span>
    <button type="button" data-reset="${esc(account.username)}">New password</button></li>`;
}

/** One printed slip: cut along the dashes and hand to the pupil. */
function slip(row) {
  return `<li class="slip">
    ${row.pupil ? `<strong class="slip-pupil">${esc(row.pupil)}</strong>` : ""}
    <span>Sign in at <span class="slip-url">${esc(row.signIn)}</span></span>
    <span>Username <code class="slip-username">${esc(row.username)}</code></span>
    <span>Password <code class="slip-password">${esc(row.password)}</code></span>
    <span class="small">You choose your own password the first time you sign in.</span></li>`;
}

/** Shows the sheet of a class just created, with its CSV ready to download. */
function showSheet(rows) {
  $("#class-slips").innerHTML = rows.map(slip).join("");
  const link = $("#class-csv");
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([classCsv(rows)], { type: "text/csv" }));
  link.download = `${id}-class-accounts.csv`;
  $("#class-sheet").hidden = false;
}

async function refresh() {
  const club = await call("GET", base);
  document.title = `${club.name} · Chess`;
  $("#club-name").textContent = club.name;
  $("#club-description").textContent = club.description;
  const mine = club.me;
  $("#club-me").textContent = mine.leader
    ? "You lead this club."
    : mine.member ? "You are a member." : ADMISSION_TEXT[club.admission];
  $("#club-sign-in").hidden = mine.signed_in;
  const joinable = mine.signed_in && !mine.member && (club.admission !== "invitation" || code);
  $("#club-join-form").hidden = !joinable;
  $("#club-message-label").hidden = club.admission !== "request";
  $("#club-join").textContent = club.admission === "request" ? "Ask to join" : "Join the club";
  $("#club-leave").hidden = !mine.member;
  $("#club-invite").hidden = !club.invite_url;
  if (club.invite_url) $("#club-invite-url").value = new URL(club.invite_url, location.origin).href;
  $("#club-arena-create").hidden = !mine.leader;
  $("#class-card").hidden = !mine.leader;
  const roster = club.class ?? [];
  $("#class-roster").innerHTML = roster.length ? roster.map(rosterItem).join("") : '<li class="muted">None yet.</li>';

  const requests = club.requests ?? [];
  $("#club-requests-card").hidden = !mine.leader || requests.length === 0;
  $("#club-requests").innerHTML = requests
    .map((request) => `<li data-username="${esc(request.username)}">${esc(request.username)}
      ${request.message ? `<span class="muted">“${esc(request.message)}”</span>` : ""}
      <button type="button" data-answer="accept" data-who="${esc(request.username)}">Accept</button>
      <button type="button" data-answer="decline" data-who="${esc(request.username)}">Decline</button></li>`)
    .join("");

  const now = Date.now();
  const arenas = [...club.arenas.running, ...club.arenas.upcoming, ...club.arenas.finished.slice(0, 10)];
  $("#club-arenas").innerHTML = arenas.length
    ? arenas.map((arena) => arenaItem(arena, now)).join("")
    : '<li class="muted">None yet.</li>';
  $("#club-count").textContent = `(${club.members.length})`;
  $("#club-members").innerHTML = club.members.map((member) => memberItem(member, mine.leader, who?.name)).join("");
}

function wire() {
  $("#club-join-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const message = event.target.message.value.trim();
    const body = {};
    if (code) body.code = code;
    if (message) body.message = message;
    const answer = await act("POST", `${base}/join`, body);
    if (answer?.joined === "requested") notice("Your request was sent: a leader will answer it.");
  });
  $("#club-leave").addEventListener("click", () => {
    if (confirm("Leave this club?")) act("POST", `${base}/leave`);
  });
  $("#club-requests").addEventListener("click", (event) => {
    const button = event.target.closest("[data-answer]");
    if (button) act("POST", `${base}/requests/${encodeURIComponent(button.dataset.who)}/${button.dataset.answer}`);
  });
  $("#club-members").addEventListener("click", (event) => {
    const remove = event.target.closest("[data-remove]");
    if (remove && confirm(`Remove ${remove.dataset.remove} from the club?`)) {
      act("POST", `${base}/members/${encodeURIComponent(remove.dataset.remove)}/remove`);
    }
    const leader = event.target.closest("[data-leader]");
    if (leader) {
      act("POST", `${base}/members/${encodeURIComponent(leader.dataset.leader)}/leader`, { leader: leader.dataset.to === "true" });
    }
  });
  $("#class-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const names = pupilNames(form.names.value);
    const { count, error } = classCount(names, form.count.value);
    if (error) {
      notice(error);
      return;
    }
    const body = { count };
    if (form.prefix.value.trim()) body.prefix = form.prefix.value.trim();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    button.textContent = "Creating…";
    const created = await act("POST", `${base}/class`, body);
    button.disabled = false;
    button.textContent = "Create the accounts";
    if (created) {
      showSheet(sheetRows(created, names, location.origin));
      form.reset();
    }
  });
  $("#class-print").addEventListener("click", () => {
    document.body.classList.add("printing-sheet");
    window.print();
    document.body.classList.remove("printing-sheet");
  });
  $("#class-roster").addEventListener("click", async (event) => {
    const button = event.target.closest("[data-reset]");
    if (!button || !confirm(`Give ${button.dataset.reset} a new password? Their old one stops working and they are signed out.`)) return;
    const answer = await act("POST", `${base}/class/${encodeURIComponent(button.dataset.reset)}/reset`);
    if (answer) {
      const el = $("#class-password");
      el.textContent = `New password for ${answer.username}: ${answer.password} (shown only now; they choose their own when they sign in).`;
      el.hidden = false;
    }
  });
  $("#club-arena-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    notice(null);
    try {
      const arena = await call("POST", "/api/arenas", arenaFormBody(form, id));
      location.assign(`/tournament/${encodeURIComponent(arena.id)}`);
    } catch (error) {
      notice(error.message);
    }
  });
}

async function main() {
  try {
    who = await me();
  } catch {
    who = null;
  }
  showAccountLink(who);
  wire();
  try {
    await refresh();
  } catch (error) {
    notice(`Could not load the club: ${error.message}`);
  }
}

main();
