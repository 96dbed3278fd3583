import { test } from "node:test";
import assert from "node:assert/strict";
import { speedName, timeControlFromPreset, timeControlText } from "../js/api.js";

test("presets are named by the speed of a 40-move game", () => {
  const names = ["1+0", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0"].map((p) => speedName(timeControlFromPreset(p)));
  assert.deepEqual(names, ["Bullet", "Blitz", "Blitz", "Blitz", "Blitz", "Rapid", "Rapid", "Rapid", "Classical"]);
  assert.equal(speedName({ kind: "correspondence" }), "Correspondence");
});

test("a game without a clock is correspondence only between two people online", () => {
  const untimed = { kind: "correspondence" };
  assert.equal(timeControlText(untimed), "Correspondence");
  assert.equal(timeControlText(untimed, "online"), "Correspondence");
  assert.equal(timeControlText(untimed, "computer"), "No clock");
  assert.equal(timeControlText(untimed, "local"), "No clock");
  assert.equal(timeControlText(timeControlFromPreset("3+2"), "computer"), "3+2");
});
