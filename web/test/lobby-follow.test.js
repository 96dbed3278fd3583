import { test } from "node:test";
import assert from "node:assert/strict";
import { goToStartedGame, STARTED_KEY } from "../js/lobby-follow.js";

function memoryStorage() {
  const map = new Map();
  return { getItem: (k) => map.get(k) ?? null, setItem: (k, v) => map.set(k, String(v)) };
}

const started = { type: "game_started", game_id: "g7", url: "/game/g7" };

test("a started game is announced with a sound and opened; a background tab is marked", () => {
  const played = [];
  const went = [];
  const storage = memoryStorage();
  const doc = { hidden: true, title: "How to play chess" };
  goToStartedGame(started, { sounds: { play: (name) => played.push(name) }, doc, storage, go: (url) => went.push(url) });
  assert.deepEqual(played, ["gameStart"]);
  assert.deepEqual(went, ["/game/g7"]);
  assert.equal(storage.getItem(STARTED_KEY), "g7");
  assert.equal(doc.title, "Your game started · How to play chess");
});

test("a tab in the foreground is not marked", () => {
  const storage = memoryStorage();
  const doc = { hidden: false, title: "Chess: play online" };
  goToStartedGame(started, { doc, storage, go: () => {} });
  assert.equal(storage.getItem(STARTED_KEY), null);
  assert.equal(doc.title, "Chess: play online");
});
