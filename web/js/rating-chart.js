// A player's rating history as plain SVG: no library, no DOM needed to
// build it (the page sets the returned markup), so it is unit-tested in Node.
//
// Input: the points of one speed as `GET /api/players/{username}/ratings`
// gives them, `[{ at_ms, rating, game_id }]`, oldest first or not.

const NS = "http://www.w3.org/2000/svg";

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Where each point goes in a `width` x `height` box with `pad` pixels of
 * margin: time on x (oldest left), rating on y (highest at the top). One
 * point sits in the middle; equal ratings draw a flat line in the middle.
 */
export function layout(points, { width = 600, height = 200, pad = 24 } = {}) {
  const sorted = [...points]
    .filter((p) => Number.isFinite(p?.at_ms) && Number.isFinite(p?.rating))
    .sort((a, b) => a.at_ms - b.at_ms);
  if (sorted.length === 0) return { points: [], min: null, max: null };
  const t0 = sorted[0].at_ms;
  const t1 = sorted[sorted.length - 1].at_ms;
  const ratings = sorted.map((p) => p.rating);
  const min = Math.min(...ratings);
  const max = Math.max(...ratings);
  const x = (t) => (t1 === t0 ? width / 2 : pad + ((t - t0) / (t1 - t0)) * (width - 2 * pad));
  const y = (r) => (max === min ? height / 2 : pad + ((max - r) / (max - min)) * (height - 2 * pad));
  return {
    points: sorted.map((p) => ({ ...p, x: round(x(p.at_ms)), y: round(y(p.rating)) })),
    min,
    max,
  };
}

function round(n) {
  return Math.round(n * 10) / 10;
}

/**
 * The SVG markup of the rating history `points`, with an accessible title
 * (`label`), the lowest and highest rating written on the axis, and a
 * `<title>` per point (its rating and date) for pointer users. Empty
 * history: an empty string.
 */
export function ratingChart(points, { width = 600, height = 200, pad = 24, label = "Rating history" } = {}) {
  const { points: placed, min, max } = layout(points, { width, height, pad });
  if (placed.length === 0) return "";
  const path = placed.map((p, i) => `${i === 0 ? "M" : "L"}${p.x},${p.y}`).join(" ");
  const dots = placed
    .map((p) => {
      const date = new Date(p.at_ms).toISOString().slice(0, 10);
      return `<circle cx="${p.x}" cy="${p.y}" r="3" class="rating-point" data-rating="${esc(p.rating)}"><title>${esc(Math.round(p.rating))} · ${esc(date)}</title></circle>`;
    })
    .join("");
  return `<svg xmlns="${NS}" class="rating-chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}">` +
    `<title>${esc(label)}</title>` +
    `<text x="2" y="${pad - 8}" class="rating-axis">${esc(Math.round(max))}</text>` +
    `<text x="2" y="${height - 6}" class="rating-axis">${esc(Math.round(min))}</text>` +
    `<path d="${path}" fill="none" stroke="currentColor" stroke-width="2" class="rating-line"/>` +
    dots +
    `</svg>`;
}
