import { test } from "node:test";
import assert from "node:assert/strict";
import { arenaClockText, countdownText, phase, sheetGame, termsText } from "../js/arena-text.js";

test("clocks read as minutes plus seconds, with quarter minutes", () => {
  assert.equal(arenaClockText({ base_s: 180, increment_s: 2 }), "3+2");
  assert.equal(arenaClockText({ base_s: 15, increment_s: 0 }), "¼+0");
  assert.equal(arenaClockText({ base_s: 30, increment_s: 0 }), "½+0");
  assert.equal(arenaClockText({ base_s: 90, increment_s: 1 }), "1.5+1");
  assert.equal(arenaClockText({ base_s: 0, increment_s: 1 }), "0+1");
});

test("countdowns round up to the second and never go negative", () => {
  assert.equal(countdownText(7_000), "0:07");
  assert.equal(countdownText(6_001), "0:07");
  assert.equal(countdownText(249_000), "4:09");
  assert.equal(countdownText(3_909_000), "1:05:09");
  assert.equal(countdownText(-5_000), "0:00");
});

test("the countdown counts to the start, then to the end, then stops", () => {
  const arena = { starts_at: 10_000, ends_at: 70_000, status: "created" };
  assert.deepEqual(phase(arena, 4_000), { label: "Starts in", ms: 6_000 });
  assert.deepEqual(phase({ ...arena, status: "started" }, 20_000), { label: "Ends in", ms: 50_000 });
  assert.deepEqual(phase({ ...arena, status: "finished" }, 80_000), { label: "Finished", ms: null });
});

test("sheet games mark doubles, null draws and berserks", () => {
  assert.deepEqual(sheetGame({ points: 2, mark: "normal", berserk: false, berserk_bonus: false }), {
    text: "2", classes: ["sheet-game"], title: "",
  });
  const fire = sheetGame({ points: 5, mark: "double", berserk: true, berserk_bonus: true });
  assert.equal(fire.text, "5");
  assert.deepEqual(fire.classes, ["sheet-game", "double", "berserk"]);
  assert.equal(fire.title, "on fire: doubled, berserked: +1");
  const nothing = sheetGame({ points: 0, mark: "null", berserk: false, berserk_bonus: false });
  assert.deepEqual(nothing.classes, ["sheet-game", "null"]);
});

test("terms name the speed, clock, length and conditions", () => {
  const arena = {
    rated: true, perf: "blitz", clock: { base_s: 180, increment_s: 2 }, starts_at: 0,
    ends_at: 45 * 60_000, berserkable: true, streaks: false, min_rating: null, max_rating: 1800,
    club_id: "chess-club",
  };
  assert.equal(
    termsText(arena),
    "Rated · Blitz 3+2 · 45 minutes · berserk allowed · no streaks · rated 1800 or less · club chess-club only",
  );
});
