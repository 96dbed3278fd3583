// What the home page and a club's page share about arenas: an arena as a
// list item, and the creation form read into lichess's field names
// (docs/protocol.md, "Arenas").

import { arenaClockText, countdownText } from "./arena-text.js";

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An arena summary as a `<li>`, with its clock, players and when, at `now`. */
export function arenaItem(arena, now) {
  const when =
    arena.status === "created"
      ? `starts in ${countdownText(arena.starts_at - now)}`
      : arena.status === "started"
        ? `${countdownText(arena.ends_at - now)} left`
        : "finished";
  return `<li class="arena-item ${esc(arena.status)}">
    <a href="/tournament/${encodeURIComponent(arena.id)}">${esc(arena.full_name)}</a>
    <span class="muted">${esc(arenaClockText(arena.clock))} · ${arena.rated ? "rated" : "casual"} · ${arena.players} player${arena.players === 1 ? "" : "s"} · ${esc(when)}</span>
  </li>`;
}

/** The body of `POST /api/arenas` from a creation form (`club`: its club's id, if any). */
export function arenaFormBody(form, club = null) {
  const body = {
    name: form.name.value.trim() || undefined,
    clockTime: Number(form.clockTime.value),
    clockIncrement: Number(form.clockIncrement.value),
    minutes: Number(form.minutes.value),
    waitMinutes: Number(form.waitMinutes.value),
    rated: form.rated.checked,
    berserkable: form.berserkable.checked,
  };
  if (club) body["conditions.teamMember.teamId"] = club;
  return body;
}
