import { test } from "node:test";
import assert from "node:assert/strict";
import {
  applyServerMessage, availableControls, moveRows, positionAt, resultText, resultScore, seatColors,
  abortExplanation, challengeTerms, offerText, statusText,
} from "../js/game-state.js";

const START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

function stateMsg(extra = {}) {
  return {
    type: "state", game_id: "g1", version: 2, mode: "online", status: "playing",
    players: { white: { name: "a", is_you: true }, black: { name: "b", is_you: false } },
    seat: "white", time_control: { kind: "clock", initial_ms: 60000, increment_ms: 0 },
    initial_fen: START,
    moves: [{ uci: "e2e4", san: "e4" }, { uci: "e7e5", san: "e5" }],
    fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    turn: "white", check: null,
    clocks: { white_ms: 60000, black_ms: 60000, running: "white", as_of: 0 },
    dests: { g1: ["f3", "h3"] }, premove_dests: {}, premove: null,
    offers: { draw: null, rematch: null }, result: null, rematch_game_id: null,
    ...extra,
  };
}

function moveEvent(version, ply, uci, san, extra = {}) {
  return {
    type: "event", version, event: { kind: "move", ply, uci, san, color: ply % 2 ? "black" : "white" },
    fen: "x", turn: ply % 2 ? "white" : "black", check: null, status: "playing",
    clocks: null, dests: {}, premove_dests: { g8: ["f6"] }, offers: { draw: null, rematch: null }, result: null,
    ...extra,
  };
}

test("a state replaces everything; a move event appends and replaces the envelope", () => {
  let { game } = applyServerMessage(null, stateMsg());
  assert.equal(game.moves.length, 2);
  const r = applyServerMessage(game, moveEvent(3, 2, "g1f3", "Nf3"));
  game = r.game;
  assert.equal(game.version, 3);
  assert.deepEqual(game.moves.at(-1), { uci: "g1f3", san: "Nf3" });
  assert.deepEqual(game.dests, {});
  assert.deepEqual(game.premove_dests, { g8: ["f6"] });
  assert.deepEqual(r.effects, [{ kind: "moved", from: "g1", to: "f3", ply: 2 }]);
});

test("versions may skip numbers (private events of others); an event before any state asks for a resync", () => {
  const { game } = applyServerMessage(null, stateMsg());
  const r = applyServerMessage(game, moveEvent(5, 2, "g1f3", "Nf3"));
  assert.equal(r.game.version, 5);
  assert.equal(r.game.moves.length, 3);
  assert.deepEqual(applyServerMessage(null, moveEvent(5, 2, "g1f3", "Nf3")).effects, [{ kind: "resync" }]);
});

test("an event already applied is ignored (no double move)", () => {
  const { game } = applyServerMessage(null, stateMsg());
  const r = applyServerMessage(game, moveEvent(2, 1, "e7e5", "e5"));
  assert.equal(r.game.moves.length, 2);
  assert.deepEqual(r.effects, []);
});

test("takeback, offers and the end are applied from events", () => {
  let { game } = applyServerMessage(null, stateMsg({ mode: "local", seat: "both" }));
  game = applyServerMessage(game, {
    type: "event", version: 3, event: { kind: "takeback", moves: 1 }, fen: "f", turn: "black",
    status: "playing", offers: { draw: null, rematch: null }, result: null,
  }).game;
  assert.deepEqual(game.moves.map((m) => m.san), ["e4"]);
  game = applyServerMessage(game, {
    type: "event", version: 4, event: { kind: "ended", result: { winner: null, reason: "agreement" } },
    status: "finished", result: { winner: null, reason: "agreement" }, dests: {},
  }).game;
  assert.equal(game.status, "finished");
  assert.equal(resultText(game.result), "Draw by agreement");
});

test("a premove message older than the game shown is a replay and changes nothing", () => {
  const { game } = applyServerMessage(null, stateMsg({ version: 10, premove: null }));
  const replayed = applyServerMessage(game, { type: "premove", version: 9, premove: { uci: "g8f6" }, reason: "set" });
  assert.equal(replayed.game.premove, null);
  assert.deepEqual(replayed.effects, []);
  // A played premove comes with its move's version: equal is news.
  const set = applyServerMessage(game, { type: "premove", version: 11, premove: { uci: "g8f6" }, reason: "set" });
  assert.deepEqual(set.game.premove, { uci: "g8f6" });
  assert.equal(set.game.version, 11);
  const played = applyServerMessage(set.game, { type: "premove", version: 11, premove: null, reason: "played" });
  assert.equal(played.game.premove, null);
  assert.deepEqual(played.effects, [{ kind: "premove", reason: "played" }]);
});

test("private premove messages and redirects become effects", () => {
  const { game } = applyServerMessage(null, stateMsg());
  const set = applyServerMessage(game, { type: "premove", premove: { uci: "g8f6" }, reason: "set" });
  assert.deepEqual(set.game.premove, { uci: "g8f6" });
  const dropped = applyServerMessage(set.game, { type: "premove", premove: null, reason: "dropped_illegal" });
  assert.equal(dropped.game.premove, null);
  assert.deepEqual(dropped.effects, [{ kind: "premove", reason: "dropped_illegal" }]);
  assert.deepEqual(applyServerMessage(game, { type: "redirect", url: "/game/2" }).effects, [{ kind: "redirect", url: "/game/2" }]);
});

test("positions for review are rebuilt from the move list, with check from the SAN", () => {
  const moves = ["f2f3:f3", "e7e5:e5", "g2g4:g4", "d8h4:Qh4#"].map((s) => {
    const [uci, san] = s.split(":");
    return { uci, san };
  });
  const game = { initial_fen: START, fen: "unused", moves, check: "e1" };
  const before = positionAt(game, 3);
  assert.equal(before.live, false);
  assert.equal(before.check, null);
  assert.deepEqual(before.lastMove, { from: "g2", to: "g4", promotion: null });
  const start = positionAt(game, 0);
  assert.equal(start.lastMove, null);
  assert.equal(start.pieces.size, 32);
  const mated = positionAt({ ...game, fen: "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3" }, 4);
  assert.equal(mated.live, true);
  assert.equal(mated.check, "e1");
  const replayed = positionAt({ ...game, moves: [...moves, { uci: "a2a3", san: "a3" }] }, 4);
  assert.equal(replayed.check, "e1", "check square found from the '#' in review");
});

test("move rows pair White and Black moves", () => {
  const rows = moveRows({ initial_fen: START, moves: [{ san: "e4" }, { san: "e5" }, { san: "Nf3" }] });
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0], { number: 1, white: { san: "e4", ply: 0 }, black: { san: "e5", ply: 1 } });
  assert.deepEqual(rows[1].black, null);
});

test("result sentences for each kind of ending", () => {
  assert.equal(resultText({ winner: "black", reason: "checkmate" }), "Black wins by checkmate");
  assert.equal(resultText({ winner: "white", reason: "resignation" }), "White wins by resignation");
  assert.equal(resultText({ winner: null, reason: "stalemate" }), "Draw by stalemate");
  assert.equal(resultText({ winner: null, reason: "timeout_vs_insufficient_material" }),
    "Draw: time out, but the opponent cannot checkmate");
  assert.equal(resultText({ winner: null, reason: "aborted" }), "Game aborted");
  assert.equal(resultText({ winner: "white", reason: "no_start" }),
    "White wins by forfeit: the opponent did not make a first move");
  assert.equal(resultScore({ winner: "white", reason: "timeout" }), "1-0");
  assert.equal(resultScore({ winner: null, reason: "fifty_moves" }), "½-½");
});

test("controls shown follow the game's state and the seat", () => {
  const { game } = applyServerMessage(null, stateMsg());
  let c = availableControls(game);
  assert.equal(c.abort, false, "both sides have moved");
  assert.equal(c.resign, true);
  assert.equal(c.drawOffer, true);
  assert.equal(c.takeback, false, "no take-back in online games");
  c = availableControls({ ...game, offers: { draw: "black", rematch: null } });
  assert.ok(c.drawAccept && c.drawDecline && !c.drawOffer && !c.drawWithdraw);
  c = availableControls({ ...game, offers: { draw: "white", rematch: null } });
  assert.ok(c.drawWithdraw && !c.drawAccept);
  c = availableControls({ ...game, moves: [] });
  assert.ok(c.abort && !c.resign);
  c = availableControls({ ...game, status: "finished", result: { winner: "white", reason: "resignation" } });
  assert.ok(c.rematchOffer && !c.resign && !c.drawOffer);
  c = availableControls({ ...game, status: "finished", offers: { draw: null, rematch: "black" } });
  assert.ok(c.rematchAccept && c.rematchDecline && !c.rematchOffer);
  c = availableControls({ ...game, seat: "none" });
  assert.ok(Object.values(c).every((v) => v === false), "spectators get no controls");
  c = availableControls({ ...game, mode: "computer", status: "finished", result: { winner: "black", reason: "checkmate" } });
  assert.ok(c.rematchOffer && !c.rematchAccept, "a rematch against the computer starts at once");
  c = availableControls({ ...game, mode: "local", seat: "both" });
  assert.ok(c.takeback && !c.drawOffer && c.resign);
  c = availableControls({ ...game, moves: [{ uci: "e2e4", san: "e4" }] });
  assert.ok(c.abort && !c.resign && !c.drawOffer, "draw offers and resignation wait until both sides moved");
  c = availableControls({ ...game, status: "finished", offers: { draw: null, rematch: "white" } });
  assert.ok(c.rematchWithdraw && !c.rematchAccept);
  assert.deepEqual(seatColors({ seat: "both" }), ["white", "black"]);
});

test("the first-move deadline is counted in whole seconds on the server's clock", async () => {
  const { firstMoveNotice } = await import("../js/game-state.js");
  const game = { status: "playing", turn: "black", first_move_deadline: 100_000 };
  assert.equal(firstMoveNotice(game, 88_500), "Black must make a first move within 12 s, or the game is aborted.");
  assert.equal(firstMoveNotice(game, 120_000), "Black must make a first move within 0 s, or the game is aborted.");
  assert.equal(firstMoveNotice({ ...game, first_move_deadline: null }, 0), null);
  assert.equal(firstMoveNotice({ ...game, status: "finished" }, 0), null);
});

test("an aborted game offers a new game, not a rematch of a game that never started", () => {
  const { game } = applyServerMessage(null, stateMsg({ moves: [], status: "finished", result: { winner: null, reason: "aborted" } }));
  const c = availableControls(game);
  assert.ok(c.newGame && !c.rematchOffer && !c.rematchAccept);
  const played = availableControls({ ...game, result: { winner: "white", reason: "resignation" } });
  assert.ok(played.rematchOffer && !played.newGame);
});

test("an abort says why: the missed first-move deadline, my abort, or the opponent's", () => {
  const { game } = applyServerMessage(null, stateMsg({ moves: [{ uci: "e2e4", san: "e4" }], turn: "black", first_move_deadline: 50_000 }));
  assert.equal(abortExplanation(game, 50_020, false), "Black (b) did not make a first move in time.");
  assert.equal(abortExplanation(game, 20_000, false), "Your opponent aborted it before both sides had made their first move.");
  assert.equal(abortExplanation(game, 50_020, true), "You aborted it before both sides had made their first move.");
  assert.match(abortExplanation(null, 0, false), /before both sides had made their first move/);
});

test("the status keeps saying whose move it is while reviewing, and gives touch users no keyboard hint", () => {
  const { game } = applyServerMessage(null, stateMsg({ premove: null }));
  assert.equal(statusText(game), "Your move (white)");
  assert.equal(statusText(game, { reviewPly: 1 }), "Your move (white) · Reviewing move 1 of 2 (End returns to the game)");
  assert.equal(statusText(game, { reviewPly: 1, touch: true }), "Your move (white) · Reviewing move 1 of 2");
  const waiting = { ...game, turn: "black", premove: { uci: "g1f3" } };
  assert.equal(statusText(waiting), "Black to move · premove g1–f3 ready (Escape clears it)");
  assert.equal(statusText(waiting, { touch: true }), "Black to move · premove g1–f3 ready (tap an empty square to clear it)");
  assert.equal(statusText({ ...game, status: "finished", result: { winner: null, reason: "agreement" } }), "Draw by agreement");
});

test("offers name the player who made them; one screen names the colour", () => {
  const { game } = applyServerMessage(null, stateMsg({ offers: { draw: "black", rematch: null } }));
  assert.equal(offerText(game), "b offers a draw.");
  assert.equal(offerText({ ...game, offers: { draw: "white", rematch: null } }), "You offered a draw.");
  const over = { ...game, status: "finished", offers: { draw: null, rematch: "black" } };
  assert.equal(offerText(over), "b offers a rematch.");
  assert.equal(offerText({ ...over, mode: "local", seat: "none" }), "Black offers a rematch.");
});

test("a waiting challenge states its time control and the creator's colour", () => {
  const { game } = applyServerMessage(null, stateMsg({ status: "open", seat: "black" }));
  assert.equal(challengeTerms(game), "1+0 · you play Black");
  assert.equal(challengeTerms({ ...game, time_control: { kind: "correspondence" } }), "Correspondence · you play Black");
  assert.equal(challengeTerms({ ...game, mode: "computer", time_control: { kind: "correspondence" } }), "No clock · you play Black");
});

test("a tournament game is never aborted, can be resigned at once and has no rematch", () => {
  const { game } = applyServerMessage(null, stateMsg({ mandatory: true, berserk: null, moves: [] }));
  let c = availableControls(game);
  assert.equal(c.abort, false);
  assert.equal(c.resign, true, "resign from the first move on");
  assert.equal(c.berserk, false, "this arena does not allow berserk");
  c = availableControls({ ...game, status: "finished", result: { winner: "black", reason: "resignation" } });
  assert.ok(!c.rematchOffer && !c.newGame, "the arena pairs the players again");
  c = availableControls({ ...game, status: "finished", offers: { draw: null, rematch: "black" } });
  assert.ok(!c.rematchAccept && !c.rematchDecline);
});

test("berserk is offered before both sides moved, once, and the event marks it", () => {
  const start = stateMsg({ mandatory: true, berserk: { white: false, black: false }, moves: [] });
  let { game } = applyServerMessage(null, start);
  assert.equal(availableControls(game).berserk, true);
  assert.equal(availableControls({ ...game, moves: [{ uci: "e2e4", san: "e4" }] }).berserk, true, "one ply played");
  assert.equal(
    availableControls({ ...game, moves: [{ uci: "e2e4", san: "e4" }, { uci: "e7e5", san: "e5" }] }).berserk,
    false,
    "both sides moved",
  );
  assert.equal(availableControls({ ...game, seat: "none" }).berserk, false, "spectators cannot");
  const event = {
    type: "event", version: 3, event: { kind: "berserk", color: "white" }, fen: START, turn: "white",
    check: null, status: "playing", clocks: { white_ms: 30000, black_ms: 60000, running: null, as_of: 0 },
    dests: {}, premove_dests: {}, offers: { draw: null, rematch: null }, result: null,
  };
  const applied = applyServerMessage(game, event);
  game = applied.game;
  assert.deepEqual(game.berserk, { white: true, black: false });
  assert.deepEqual(applied.effects, [{ kind: "berserk", color: "white" }]);
  assert.equal(game.clocks.white_ms, 30000, "the envelope's clock is cut");
  assert.equal(availableControls(game).berserk, false, "once");
});
