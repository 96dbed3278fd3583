import { test } from "node:test";
import assert from "node:assert/strict";
import {
  edgeCoordinates,
  piecesFromFen, boardModel, squaresInDrawOrder, neighbourSquare, squareLabel,
  capturedMaterial, applyUci, parseUci, turnFromFen,
} from "../js/board.js";

const START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

test("reads every piece of the starting position from FEN", () => {
  const pieces = piecesFromFen(START);
  assert.equal(pieces.size, 32);
  assert.deepEqual(pieces.get("e1"), { color: "white", role: "king" });
  assert.deepEqual(pieces.get("d8"), { color: "black", role: "queen" });
  assert.deepEqual(pieces.get("g1"), { color: "white", role: "knight" });
  assert.equal(pieces.get("e4"), undefined);
});

test("rejects malformed FEN placements with an exact message", () => {
  assert.throws(() => piecesFromFen("8/8/8"), /needs 8 ranks, got 3/);
  assert.throws(() => piecesFromFen("rnbqkbnx/8/8/8/8/8/8/8 w - - 0 1"), /unknown piece letter 'x'/);
  assert.throws(() => piecesFromFen("7/8/8/8/8/8/8/8 w - - 0 1"), /rank 8 has 7 squares/);
  assert.throws(() => piecesFromFen("ppppppppp/8/8/8/8/8/8/8 w - - 0 1"), /more than 8 squares/);
});

test("turn comes from the FEN's second field", () => {
  assert.equal(turnFromFen(START), "white");
  assert.equal(turnFromFen("8/8/8/8/8/8/8/8 b - - 0 1"), "black");
});

test("draw order puts a8 top-left for White and h1 top-left for Black", () => {
  const white = squaresInDrawOrder("white");
  const black = squaresInDrawOrder("black");
  assert.equal(white[0], "a8");
  assert.equal(white[63], "h1");
  assert.equal(black[0], "h1");
  assert.equal(black[63], "a8");
  assert.equal(new Set(white).size, 64);
});

test("arrow keys move across the screen whatever the orientation", () => {
  assert.equal(neighbourSquare("e2", "up", "white"), "e3");
  assert.equal(neighbourSquare("e2", "up", "black"), "e1");
  assert.equal(neighbourSquare("e2", "right", "black"), "d2");
  assert.equal(neighbourSquare("h8", "right", "white"), "h8", "stays on the board");
  assert.equal(neighbourSquare("a1", "down", "white"), "a1");
});

test("squares have accessible names", () => {
  assert.equal(squareLabel("e4", { color: "white", role: "knight" }), "e4, white knight");
  assert.equal(squareLabel("e5", null), "e5, empty");
});

test("a selected piece shows dots on empty targets and rings on captures", () => {
  const fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
  const model = boardModel({
    fen,
    orientation: "white",
    selected: "e4",
    dests: { e4: ["e5", "d5"], g1: ["f3", "h3"] },
    lastMove: { from: "d7", to: "d5" },
  });
  const sq = Object.fromEntries(model.squares.map((s) => [s.square, s]));
  assert.ok(sq.e5.classes.includes("move-target"));
  assert.ok(!sq.e5.classes.includes("capture-target"));
  assert.ok(sq.d5.classes.includes("capture-target"));
  assert.ok(sq.e4.classes.includes("selected"));
  assert.ok(sq.d7.classes.includes("last-move") && sq.d5.classes.includes("last-move"));
  assert.ok(sq.g1.movable && !sq.a1.movable, "only pieces with a move respond");
  assert.ok(!sq.f3.classes.includes("move-target"), "targets of unselected pieces are hidden");
  assert.equal(sq.e4.label, "e4, white pawn");
});

test("king in check, premove and premove targets are marked", () => {
  const model = boardModel({
    fen: START,
    orientation: "black",
    check: "e1",
    premove: { from: "g8", to: "f6" },
    selected: "b8",
    dests: {},
    premoveDests: { b8: ["a6", "c6"], g8: ["f6"] },
  });
  const sq = Object.fromEntries(model.squares.map((s) => [s.square, s]));
  assert.ok(sq.e1.classes.includes("check"));
  assert.ok(sq.g8.classes.includes("premove") && sq.f6.classes.includes("premove"));
  assert.ok(sq.c6.classes.includes("premove-target") && sq.c6.classes.includes("move-target"));
  assert.equal(model.squares[0].square, "h1");
});

test("captured material counts what is missing, most valuable first", () => {
  // White has lost a knight; Black has lost the queen and two pawns.
  const pieces = piecesFromFen("rnb1kbnr/ppppp3/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1");
  const c = capturedMaterial(pieces);
  assert.deepEqual(c.byWhite, ["queen", "pawn", "pawn", "pawn"]);
  assert.deepEqual(c.byBlack, ["knight"]);
  assert.equal(c.advantage, 9 + 3 - 3);
});

test("captured material of a set-up position is counted from that position", () => {
  const initial = piecesFromFen("4k3/8/8/8/8/8/4P3/4K2R w K - 0 1");
  const now = piecesFromFen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
  const c = capturedMaterial(now, initial);
  assert.deepEqual(c.byBlack, ["rook"]);
  assert.deepEqual(c.byWhite, []);
  assert.equal(c.advantage, 1);
});

test("applying UCI moves handles castling, en passant and promotion", () => {
  let p = piecesFromFen("r3k2r/8/8/3pP3/8/8/1p6/R3K2R w KQkq d6 0 1");
  p = applyUci(p, "e1g1");
  assert.equal(p.get("g1").role, "king");
  assert.equal(p.get("f1").role, "rook");
  assert.equal(p.has("h1"), false);
  p = applyUci(p, "e8c8");
  assert.equal(p.get("d8").role, "rook");
  assert.equal(p.has("a8"), false);
  p = applyUci(p, "e5d6");
  assert.equal(p.has("d5"), false, "pawn taken en passant is removed");
  assert.deepEqual(p.get("d6"), { color: "white", role: "pawn" });
  p = applyUci(p, "b2a1n");
  assert.deepEqual(p.get("a1"), { color: "black", role: "knight" });
  assert.throws(() => applyUci(p, "e3e4"), /no piece on e3/);
  assert.throws(() => applyUci(p, "castle"), /not a UCI move/);
});

test("parses UCI moves and refuses anything else", () => {
  assert.deepEqual(parseUci("e7e8q"), { from: "e7", to: "e8", promotion: "queen" });
  assert.deepEqual(parseUci("g1f3"), { from: "g1", to: "f3", promotion: null });
  assert.equal(parseUci("e7e8k"), null);
  assert.equal(parseUci("i1a1"), null);
  assert.equal(parseUci(undefined), null);
});

test("coordinates sit on the bottom row and left column as seen on screen", () => {
  const printed = (orientation) =>
    boardModel({ fen: "8/8/8/8/8/8/8/8 w - - 0 1", orientation })
      .squares.filter((sq) => sq.coords.file || sq.coords.rank)
      .map((sq) => `${sq.square}:${sq.coords.file ?? ""}${sq.coords.rank ?? ""}`);
  assert.deepEqual(printed("white"), [
    "a8:8", "a7:7", "a6:6", "a5:5", "a4:4", "a3:3", "a2:2",
    "a1:a1", "b1:b", "c1:c", "d1:d", "e1:e", "f1:f", "g1:g", "h1:h",
  ]);
  assert.deepEqual(printed("black"), [
    "h1:1", "h2:2", "h3:3", "h4:4", "h5:5", "h6:6", "h7:7",
    "h8:h8", "g8:g", "f8:f", "e8:e", "d8:d", "c8:c", "b8:b", "a8:a",
  ]);
  assert.deepEqual(edgeCoordinates("e4", "white"), { file: null, rank: null });
});
