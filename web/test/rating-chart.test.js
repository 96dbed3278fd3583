import { test } from "node:test";
import assert from "node:assert/strict";
import { layout, ratingChart } from "../js/rating-chart.js";

const day = 86_400_000;

test("points are placed by time and rating: oldest left, highest on top", () => {
  const { points, min, max } = layout(
    [
      { at_ms: 3 * day, rating: 1600, game_id: "c" },
      { at_ms: 1 * day, rating: 1500, game_id: "a" },
      { at_ms: 2 * day, rating: 1400, game_id: "b" },
    ],
    { width: 100, height: 100, pad: 10 },
  );
  assert.deepEqual(points.map((p) => p.game_id), ["a", "b", "c"]);
  assert.equal(min, 1400);
  assert.equal(max, 1600);
  assert.deepEqual(points.map((p) => [p.x, p.y]), [[10, 50], [50, 90], [90, 10]]);
});

test("one point, or equal ratings, sit in the middle; bad points are dropped", () => {
  const one = layout([{ at_ms: 5, rating: 1500 }], { width: 100, height: 60 });
  assert.deepEqual(one.points.map((p) => [p.x, p.y]), [[50, 30]]);
  const flat = layout([{ at_ms: 1, rating: 1500 }, { at_ms: 2, rating: 1500 }, { at_ms: 3, rating: null }], { width: 100, height: 60, pad: 0 });
  assert.deepEqual(flat.points.map((p) => p.y), [30, 30]);
});

test("the chart is one path through every point, with an accessible label and escaped text", () => {
  const svg = ratingChart(
    [
      { at_ms: Date.UTC(2026, 0, 1), rating: 1500.4, game_id: "a" },
      { at_ms: Date.UTC(2026, 0, 2), rating: 1523.6, game_id: "b" },
    ],
    { label: "Blitz <rating>" },
  );
  assert.match(svg, /^<svg [^>]*role="img" aria-label="Blitz &#60;rating&#62;"/);
  assert.equal((svg.match(/<path /g) ?? []).length, 1);
  assert.equal((svg.match(/<circle /g) ?? []).length, 2);
  assert.match(svg, /d="M24,176 L576,24"/);
  assert.match(svg, /<title>1524 · 2026-01-02<\/title>/);
  assert.equal(ratingChart([]), "");
});
