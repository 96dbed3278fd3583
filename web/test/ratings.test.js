import { test } from "node:test";
import assert from "node:assert/strict";

import { changeLabel, ratingLabel, ratingsKey } from "../js/ratings.js";

test("ratings show a ? while provisional, nothing for a guest", () => {
  assert.equal(ratingLabel({ rating: 1523, provisional: false }), "1523");
  assert.equal(ratingLabel({ rating: 1500, provisional: true }), "1500?");
  assert.equal(ratingLabel(null), "");
  assert.equal(ratingLabel({}), "");
});

test("changes carry their sign", () => {
  assert.equal(changeLabel(7), "+7");
  assert.equal(changeLabel(-7), "-7");
  assert.equal(changeLabel(0), "±0");
  assert.equal(changeLabel(null), "");
  assert.equal(changeLabel(undefined), "");
});

test("ratings are fetched again when seats fill or the game ends, not per move", () => {
  const playing = { game_id: "g", status: "playing", players: { white: { id: "a" }, black: { id: "b" } }, moves: [] };
  const moved = { ...playing, moves: [{ uci: "e2e4" }] };
  const ended = { ...playing, status: "finished" };
  assert.equal(ratingsKey(playing), ratingsKey(moved));
  assert.notEqual(ratingsKey(playing), ratingsKey(ended));
  assert.equal(ratingsKey(null), "");
});
