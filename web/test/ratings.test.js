import { test } from "node:test";
import assert from "node:assert/strict";

import { changeLabel, ratingLabel, ratingsKey, ratingsSummary } from "../js/ratings.js";

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

test("the account page lists every speed in lichess's order, provisional ones marked", () => {
  const answer = {
    username: "Alice",
    ratings: {
      correspondence: { rating: 1500, rd: 350, provisional: true, games: 0, history: [] },
      blitz: { rating: 1662, rd: 80, provisional: false, games: 31, history: [] },
      bullet: { rating: 1432, rd: 200, provisional: true, games: 2, history: [] },
    },
  };
  assert.deepEqual(ratingsSummary(answer), [
    { name: "Bullet", label: "1432?", games: 2 },
    { name: "Blitz", label: "1662", games: 31 },
    { name: "Correspondence", label: "1500?", games: 0 },
  ]);
  assert.deepEqual(ratingsSummary(null), []);
  assert.deepEqual(ratingsSummary({ ratings: { ultra: { rating: 1 } } }), [], "unknown speeds are not shown");
});
