// The home page's clubs: the signed-in account's clubs and the form that
// creates one (docs/protocol.md, "Clubs").

const $ = (sel) => document.querySelector(sel);

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Shows the account's clubs and wires the form; guests see neither. */
export async function showClubs(who, notice) {
  const card = $("#clubs-card");
  if (who?.kind !== "account") {
    card.hidden = true;
    return;
  }
  card.hidden = false;
  $("#club-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    notice(null);
    const form = event.target;
    const res = await fetch("/api/clubs", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: form.name.value,
        description: form.description.value,
        admission: form.admission.value,
      }),
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      notice(data?.error?.message ?? `HTTP ${res.status}`);
      return;
    }
    location.assign(data.url);
  });
  try {
    const res = await fetch("/api/clubs/mine", { credentials: "same-origin" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const { clubs } = await res.json();
    $("#my-clubs").innerHTML = clubs.length
      ? clubs.map((club) => `<li><a href="${esc(club.url)}">${esc(club.name)}</a></li>`).join("")
      : '<li class="muted">You are in no club yet.</li>';
  } catch (error) {
    notice(`Could not load your clubs: ${error.message}`);
  }
}
