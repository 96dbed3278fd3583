import { test } from "node:test";
import assert from "node:assert/strict";
import { formatClock, remainingAt, clockFace, ClockView } from "../js/clock.js";

test("formats minutes and seconds, hours when needed", () => {
  assert.equal(formatClock(180_000), "3:00");
  assert.equal(formatClock(65_999), "1:05");
  assert.equal(formatClock(10_000), "0:10");
  assert.equal(formatClock(3_600_000), "1:00:00");
  assert.equal(formatClock(5_400_500), "1:30:00");
});

test("shows tenths under ten seconds, rounded down", () => {
  assert.equal(formatClock(9_999), "0:09.9");
  assert.equal(formatClock(4_250), "0:04.2");
  assert.equal(formatClock(99), "0:00.0");
  assert.equal(formatClock(-50), "0:00.0");
});

test("only the running clock loses time between server updates", () => {
  const clocks = { white_ms: 60_000, black_ms: 30_000, running: "black" };
  assert.deepEqual(remainingAt(clocks, 1000, 3500), { white: 60_000, black: 27_500 });
  const stopped = { ...clocks, running: null };
  assert.deepEqual(remainingAt(stopped, 1000, 9000), { white: 60_000, black: 30_000 });
});

test("low time and flag states", () => {
  assert.equal(clockFace(25_000, true).low, false);
  assert.equal(clockFace(19_000, true).low, true);
  assert.equal(clockFace(0, true).flagged, true);
  assert.equal(clockFace(1, false).flagged, false);
});

class FakeElement {
  constructor() { this.textContent = ""; this.hidden = false; this.set = new Set(); }
  get classList() {
    return { toggle: (name, on) => (on ? this.set.add(name) : this.set.delete(name)) };
  }
}

test("the view counts down each frame and hides for correspondence", () => {
  let now = 0;
  const frames = [];
  const els = { white: new FakeElement(), black: new FakeElement() };
  const view = new ClockView(els, { now: () => now, frame: (cb) => frames.push(cb), cancel: () => {} });
  view.update({ white_ms: 12_000, black_ms: 5_000, running: "white" });
  assert.equal(els.white.textContent, "0:12");
  assert.equal(els.black.textContent, "0:05.0");
  assert.ok(els.white.set.has("running") && !els.black.set.has("running"));
  now = 2_500;
  frames.shift()();
  assert.equal(els.white.textContent, "0:09.5");
  assert.equal(els.black.textContent, "0:05.0", "the waiting clock does not move");
  view.update(null);
  assert.equal(els.white.hidden, true);
  assert.equal(els.black.hidden, true);
});

test("moving the clocks to other elements keeps the time counted so far", () => {
  let now = 0;
  const view = new ClockView({ white: new FakeElement(), black: new FakeElement() }, {
    now: () => now, frame: () => 1, cancel: () => {},
  });
  view.update({ white_ms: 60_000, black_ms: 60_000, running: "black" });
  now = 5_000;
  const flipped = { white: new FakeElement(), black: new FakeElement() };
  view.setElements(flipped);
  assert.equal(flipped.black.textContent, "0:55");
  assert.equal(flipped.white.textContent, "1:00");
});

test("a running clock that falls into low time is reported once, again after an increment lifts it", () => {
  let now = 0;
  const frames = [];
  const low = [];
  const view = new ClockView({ white: new FakeElement(), black: new FakeElement() }, {
    now: () => now, frame: (cb) => frames.push(cb), cancel: () => {}, onLow: (color) => low.push(color),
  });
  view.update({ white_ms: 21_000, black_ms: 5_000, running: "white" });
  assert.deepEqual(low, [], "Black is low but not running; White is not low yet");
  now = 1_500;
  frames.shift()();
  now = 1_600;
  frames.shift()();
  assert.deepEqual(low, ["white"], "once, not every frame");
  now = 0;
  view.update({ white_ms: 25_000, black_ms: 5_000, running: "black" });
  assert.deepEqual(low, ["white", "black"]);
  view.update({ white_ms: 19_000, black_ms: 5_000, running: "white" });
  assert.deepEqual(low, ["white", "black", "white"], "White fell again after climbing out");
});
