import { test } from "node:test";
import assert from "node:assert/strict";
import { tapSquare, pressSquare, needsPromotion, promotionChoices, toUci } from "../js/input.js";

const dests = { e2: ["e3", "e4"], g1: ["f3", "h3"], e1: ["g1"] };

test("tapping a movable piece selects it; tapping an empty square does not", () => {
  assert.deepEqual(tapSquare({ selected: null, dests }, "e2").selected, "e2");
  assert.equal(tapSquare({ selected: null, dests }, "e5").selected, null);
  assert.equal(tapSquare({ selected: null, dests }, "a2").selected, null, "a piece with no move does not respond");
});

test("tapping a destination plays the move and clears the selection", () => {
  const r = tapSquare({ selected: "e2", dests }, "e4");
  assert.deepEqual(r.play, { from: "e2", to: "e4" });
  assert.equal(r.selected, null);
});

test("castling is the king's two-square move", () => {
  assert.deepEqual(tapSquare({ selected: "e1", dests }, "g1").play, { from: "e1", to: "g1" });
});

test("tapping another own piece switches; the same piece again clears", () => {
  assert.equal(tapSquare({ selected: "e2", dests }, "g1").selected, "g1");
  const again = tapSquare({ selected: "e2", dests }, "e2");
  assert.equal(again.selected, null);
  assert.equal(again.play, undefined);
});

test("during the opponent's turn taps prepare a premove from the premove destinations", () => {
  const state = { selected: null, dests: {}, premoveDests: { g8: ["f6", "h6"] } };
  assert.equal(tapSquare(state, "g8").selected, "g8");
  const r = tapSquare({ ...state, selected: "g8" }, "f6");
  assert.deepEqual(r.premove, { from: "g8", to: "f6" });
  assert.equal(r.play, undefined);
});

test("a tap elsewhere clears an existing premove", () => {
  const state = { selected: null, dests: {}, premoveDests: { g8: ["f6"] }, hasPremove: true };
  assert.equal(tapSquare(state, "a4").clearPremove, true);
  assert.equal(tapSquare({ ...state, hasPremove: false }, "a4").clearPremove, false);
});

test("pressing a movable piece selects it at once, so it can be dragged", () => {
  assert.equal(pressSquare({ selected: null, dests }, "e2").selected, "e2");
  assert.equal(pressSquare({ selected: "e2", dests }, "g1").selected, "g1", "another own piece switches at once");
});

test("a press that would not select waits for the release", () => {
  assert.equal(pressSquare({ selected: null, dests }, "e5"), null, "an empty square");
  assert.equal(pressSquare({ selected: null, dests }, "a2"), null, "a piece with no move");
  assert.equal(pressSquare({ selected: "e2", dests }, "e4"), null, "a destination: the release plays the move");
  assert.equal(pressSquare({ selected: "e2", dests }, "e2"), null, "the selected piece: the release clears it");
  const premoves = { selected: "g8", dests: {}, premoveDests: { g8: ["f6"], b8: ["c6"] } };
  assert.equal(pressSquare(premoves, "f6"), null, "a premove destination: the release prepares the premove");
});

test("a press and a tap agree on every square", () => {
  const states = [
    { selected: null, dests },
    { selected: "e2", dests },
    { selected: "g8", dests: {}, premoveDests: { g8: ["f6", "h6"], b8: ["c6"] }, hasPremove: true },
  ];
  const squares = ["e2", "e4", "g1", "f3", "a2", "e5", "g8", "f6", "b8", "a4"];
  for (const state of states) {
    for (const square of squares) {
      const press = pressSquare(state, square);
      const tap = tapSquare(state, square);
      if (press) assert.deepEqual(press, tap, `${state.selected} then ${square}`);
      else assert.notEqual(tap.selected, square, `${state.selected} then ${square}: a tap would select`);
    }
  }
});

test("pressing a piece to prepare another premove clears the one set", () => {
  const state = { selected: null, dests: {}, premoveDests: { g8: ["f6"] }, hasPremove: true };
  assert.deepEqual(pressSquare(state, "g8"), { selected: "g8", clearPremove: true });
});

test("promotion is needed only for a pawn reaching its far rank", () => {
  assert.equal(needsPromotion({ color: "white", role: "pawn" }, "e8"), true);
  assert.equal(needsPromotion({ color: "black", role: "pawn" }, "a1"), true);
  assert.equal(needsPromotion({ color: "white", role: "pawn" }, "e7"), false);
  assert.equal(needsPromotion({ color: "white", role: "rook" }, "e8"), false);
  assert.equal(needsPromotion(undefined, "e8"), false);
});

test("the four promotion pieces stand on the promotion square and below it", () => {
  const white = promotionChoices("e8", "white");
  assert.deepEqual(white.map((c) => c.role), ["queen", "knight", "rook", "bishop"]);
  assert.deepEqual(white.map((c) => [c.col, c.row]), [[4, 0], [4, 1], [4, 2], [4, 3]]);
  // Black promoting on e1 seen from White's side: drawn upward from the bottom row.
  const black = promotionChoices("e1", "white");
  assert.deepEqual(black.map((c) => [c.col, c.row]), [[4, 7], [4, 6], [4, 5], [4, 4]]);
  // The same from Black's side: e1 is at the top.
  assert.deepEqual(promotionChoices("e1", "black")[0], { role: "queen", col: 3, row: 0 });
});

test("intents become UCI", () => {
  assert.equal(toUci("e7", "e8", "knight"), "e7e8n");
  assert.equal(toUci("g1", "f3"), "g1f3");
});
