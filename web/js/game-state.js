// The client's copy of a game, updated only from server messages (see
// docs/protocol.md), and the mapping from it to what the page draws.
// Pure: no DOM, no sockets, unit-tested under Node.

import { applyUci, kingSquare, parseUci, piecesFromFen, turnFromFen } from "./board.js";

/** Fields every `event` message carries about the situation after the event. */
const ENVELOPE_FIELDS = [
  "fen", "turn", "check", "status", "clocks", "first_move_deadline",
  "dests", "premove_dests", "offers", "result",
];

/** Human words for each end reason of the protocol. */
export const REASON_TEXT = {
  checkmate: "checkmate",
  resignation: "resignation",
  timeout: "time out",
  timeout_vs_insufficient_material: "time out, but the opponent cannot checkmate",
  stalemate: "stalemate",
  insufficient_material: "insufficient material",
  threefold_repetition: "threefold repetition",
  fifty_moves: "fifty-move rule",
  agreement: "draw by agreement",
  aborted: "game aborted",
  no_first_move: "aborted: the first move was not made in time",
};

/**
 * Applies one server message to the game. Returns the new game (or the same
 * one when nothing changed) and a list of effects for the page:
 * `{kind: "resync"}` (an event before any state: send hello again), `{kind: "moved", from, to}`
 * (animate), `{kind: "redirect", url}`, `{kind: "premove", reason}`,
 * `{kind: "ack", ply}`, `{kind: "error", code, message}`, `{kind: "pong", t}`.
 *
 * @param {object|null} game the current game, null before the first `state`
 */
export function applyServerMessage(game, msg) {
  switch (msg?.type) {
    case "state": {
      const next = { ...msg, moves: [...(msg.moves ?? [])] };
      delete next.type;
      const effects = [];
      const lastOld = game?.moves?.at(-1)?.uci;
      const lastNew = next.moves.at(-1)?.uci;
      if (game && game.game_id === next.game_id && lastNew && lastOld !== lastNew) {
        const mv = parseUci(lastNew);
        if (mv) effects.push({ kind: "moved", from: mv.from, to: mv.to });
      }
      return { game: next, effects };
    }
    case "event": {
      if (!game) return { game, effects: [{ kind: "resync" }] };
      // Versions count private changes too, so numbers may be skipped; only
      // an event the client already has is ignored.
      if (msg.version <= game.version) return { game, effects: [] };
      const next = { ...game, version: msg.version, moves: [...game.moves] };
      for (const field of ENVELOPE_FIELDS) if (field in msg) next[field] = msg[field];
      const effects = [];
      const ev = msg.event ?? {};
      if (ev.kind === "move") {
        next.moves.length = Math.min(next.moves.length, ev.ply);
        next.moves.push({ uci: ev.uci, san: ev.san });
        const mv = parseUci(ev.uci);
        if (mv) effects.push({ kind: "moved", from: mv.from, to: mv.to, ply: ev.ply });
      } else if (ev.kind === "takeback") {
        next.moves.length = Math.min(next.moves.length, ev.moves);
      } else if (ev.kind === "player_joined") {
        next.players = { ...next.players, [ev.color]: ev.player };
      } else if (ev.kind === "rematch_started") {
        next.rematch_game_id = ev.game_id;
      }
      // A premove is private and not versioned; the server clears it when played.
      if (next.status !== "playing") next.premove = null;
      return { game: next, effects };
    }
    case "premove":
      if (!game) return { game, effects: [] };
      return {
        game: { ...game, premove: msg.premove },
        effects: [{ kind: "premove", reason: msg.reason }],
      };
    case "ack":
      return { game, effects: [{ kind: "ack", ply: msg.ply }] };
    case "redirect":
      return { game, effects: [{ kind: "redirect", url: msg.url }] };
    case "error":
      return { game, effects: [{ kind: "error", code: msg.code, message: msg.message, inReplyTo: msg.in_reply_to }] };
    case "pong":
      return { game, effects: [{ kind: "pong", t: msg.t, rttMs: msg.rtt_ms }] };
    default:
      return { game, effects: [] };
  }
}

/** The colours a player holds in this game. */
export function seatColors(game) {
  if (!game) return [];
  if (game.seat === "both") return ["white", "black"];
  return game.seat === "white" || game.seat === "black" ? [game.seat] : [];
}

/**
 * The position shown at `ply` (number of moves played; the last ply is the
 * live position), rebuilt from the initial FEN and the move list. The live
 * position uses the server's FEN and check square as they are.
 */
export function positionAt(game, ply) {
  const live = ply >= game.moves.length;
  if (live) {
    const pieces = piecesFromFen(game.fen);
    const last = game.moves.at(-1);
    return {
      pieces,
      lastMove: last ? parseUci(last.uci) : null,
      check: game.check ?? null,
      live: true,
    };
  }
  let pieces = piecesFromFen(game.initial_fen);
  for (const move of game.moves.slice(0, ply)) pieces = applyUci(pieces, move.uci);
  const last = ply > 0 ? game.moves[ply - 1] : null;
  let check = null;
  if (last && /[+#]$/.test(last.san)) {
    const firstTurn = turnFromFen(game.initial_fen);
    const toMove = (ply % 2 === 0) === (firstTurn === "white") ? "white" : "black";
    check = kingSquare(pieces, toMove);
  }
  return { pieces, lastMove: last ? parseUci(last.uci) : null, check, live: false };
}

/** The sentence that says how the game ended ("Black wins by checkmate"). */
export function resultText(result) {
  if (!result) return "";
  const reason = REASON_TEXT[result.reason] ?? result.reason;
  if (result.reason === "aborted" || result.reason === "no_first_move") {
    return reason.charAt(0).toUpperCase() + reason.slice(1);
  }
  if (result.winner) {
    const side = result.winner === "white" ? "White" : "Black";
    return `${side} wins by ${reason}`;
  }
  return `Draw: ${reason}`;
}

/** The PGN-style score of a result ("1-0", "0-1", "½-½", "*"). */
export function resultScore(result) {
  if (!result) return "*";
  if (result.winner === "white") return "1-0";
  if (result.winner === "black") return "0-1";
  if (result.reason === "aborted" || result.reason === "no_first_move") return "*";
  return "½-½";
}

/** Move list rows: [{number, white: {san, ply}, black: {san, ply}|null}]. */
export function moveRows(game) {
  const rows = [];
  const blackFirst = turnFromFen(game.initial_fen ?? game.fen) === "black";
  const list = game.moves.map((m, ply) => ({ san: m.san, ply }));
  if (blackFirst) list.unshift(null);
  for (let i = 0; i < list.length; i += 2) {
    rows.push({ number: rows.length + 1, white: list[i], black: list[i + 1] ?? null });
  }
  return rows;
}

/**
 * Which controls apply right now, for the player holding `seatColors(game)`.
 * Each is a boolean; the page shows exactly the true ones.
 */
export function availableControls(game) {
  const mine = seatColors(game);
  const player = mine.length > 0;
  const playing = game.status === "playing";
  const finished = game.status === "finished";
  const oneScreen = game.mode === "local";
  const vsComputer = game.mode === "computer";
  const drawBy = game.offers?.draw ?? null;
  const rematchBy = game.offers?.rematch ?? null;
  const online = game.mode === "online";
  // Abort is possible until both sides have made their first move.
  const bothMoved = game.moves.length >= 2;
  return {
    abort: player && playing && !bothMoved,
    resign: player && playing && bothMoved,
    drawOffer: player && playing && online && bothMoved && drawBy === null,
    drawAccept: player && playing && online && drawBy !== null && !mine.includes(drawBy),
    drawDecline: player && playing && online && drawBy !== null && !mine.includes(drawBy),
    drawWithdraw: player && playing && online && drawBy !== null && mine.includes(drawBy),
    // On one screen and against the computer a rematch starts at once (colours swapped).
    rematchOffer: player && finished && !game.rematch_game_id && (online ? rematchBy === null : true),
    rematchAccept: player && finished && online && rematchBy !== null && !mine.includes(rematchBy),
    rematchDecline: player && finished && online && rematchBy !== null && !mine.includes(rematchBy),
    rematchWithdraw: player && finished && online && rematchBy !== null && mine.includes(rematchBy),
    takeback: player && playing && (oneScreen || vsComputer) && game.moves.length > 0,
  };
}

/**
 * The warning shown while the side to move still owes its first move
 * ("White must make a first move within 12 s, or the game is aborted"),
 * or null. `serverNow` is the current time on the server's clock.
 */
export function firstMoveNotice(game, serverNow) {
  if (!game || game.status !== "playing" || typeof game.first_move_deadline !== "number") return null;
  const seconds = Math.max(0, Math.ceil((game.first_move_deadline - serverNow) / 1000));
  const side = game.turn === "white" ? "White" : "Black";
  return `${side} must make a first move within ${seconds} s, or the game is aborted.`;
}
