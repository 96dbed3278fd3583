// The home page's arenas: those running, upcoming and lately finished, and
// the form a signed-in account creates one with (lichess's field names,
// `docs/protocol.md`, "Arenas").

import { arenaFormBody, arenaItem } from "./arena-list.js";

const $ = (sel) => document.querySelector(sel);

/** Shows the arenas; `notice` reports a failure. */
export async function refreshArenas(notice) {
  let lists;
  try {
    const res = await fetch("/api/arenas", { credentials: "same-origin" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    lists = await res.json();
  } catch (error) {
    notice(`Could not load the arenas: ${error.message}`);
    return;
  }
  const now = Date.now();
  const shown = [...lists.running, ...lists.upcoming, ...lists.finished.slice(0, 5)];
  $("#arenas").innerHTML = shown.length
    ? shown.map((arena) => arenaItem(arena, now)).join("")
    : '<li class="muted">No arena yet: create the first.</li>';
}

/** Wires the create form; it shows only to signed-in accounts. */
export function wireArenaForm(who, notice) {
  const form = $("#arena-form");
  const signedIn = who?.kind === "account";
  $("#arena-create").hidden = !signedIn;
  $("#arena-sign-in-hint").hidden = signedIn;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice(null);
    const body = arenaFormBody(form);
    const res = await fetch("/api/arenas", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      notice(data?.error?.message ?? `HTTP ${res.status}`);
      return;
    }
    location.assign(`/tournament/${encodeURIComponent(data.id)}`);
  });
}
