// The client's copy of a game, updated only from server messages (see
// docs/protocol.md), and the mapping from it to what the page draws.
// Pure: no DOM, no sockets, unit-tested under Node.

import { applyUci, kingSquare, parseUci, piecesFromFen, turnFromFen } from "./board.js";
import { timeControlText } from "./api.js";

/** Fields every `event` message carries about the situation after the event. */
const ENVELOPE_FIELDS = [
  "fen", "turn", "check", "status", "clocks", "first_move_deadline",
  "dests", "premove_dests", "offers", "result",
];

/** Human words for each end reason of the protocol, as the end of "… wins by". */
export const REASON_TEXT = {
  checkmate: "checkmate",
  resignation: "resignation",
  timeout: "time out",
  no_start: "forfeit: the opponent did not make a first move",
};

/** The whole sentence of each drawn (or aborted) ending. */
const NO_WINNER_TEXT = {
  timeout_vs_insufficient_material: "Draw: time out, but the opponent cannot checkmate",
  stalemate: "Draw by stalemate",
  insufficient_material: "Draw: neither side can checkmate",
  threefold_repetition: "Draw by threefold repetition",
  fifty_moves: "Draw by the fifty-move rule",
  agreement: "Draw by agreement",
  aborted: "Game aborted",
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
      } else if (ev.kind === "berserk") {
        next.berserk = { ...(next.berserk ?? { white: false, black: false }), [ev.color]: true };
        effects.push({ kind: "berserk", color: ev.color });
      }
      // The server clears a premove when it is played (a `premove` message
      // follows); a game that ended has none.
      if (next.status !== "playing") next.premove = null;
      return { game: next, effects };
    }
    case "premove": {
      if (!game) return { game, effects: [] };
      // Versioned like events: one older than the game shown is a replay of
      // what the page already has (a played premove shares its move's
      // version, so equal is new).
      const version = typeof msg.version === "number" ? msg.version : game.version;
      if (version < game.version) return { game, effects: [] };
      return {
        game: { ...game, version, premove: msg.premove },
        effects: [{ kind: "premove", reason: msg.reason }],
      };
    }
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

/** The sentence that says how the game ended ("Black wins by checkmate", "Draw by agreement"). */
export function resultText(result) {
  if (!result) return "";
  if (result.winner) {
    const side = result.winner === "white" ? "White" : "Black";
    return `${side} wins by ${REASON_TEXT[result.reason] ?? result.reason.replaceAll("_", " ")}`;
  }
  return NO_WINNER_TEXT[result.reason] ?? `Draw: ${result.reason.replaceAll("_", " ")}`;
}

/**
 * Why an aborted game ended, as far as this page can tell: the protocol's
 * `aborted` covers a player's abort and the server's abort at a missed
 * first-move deadline. `before` is the game just before the `ended` event,
 * `serverNow` the server's time when it arrived, `iAborted` whether this
 * page sent `abort`. Returns a sentence, or a general one when unknown
 * (a finished game opened later).
 */
export function abortExplanation(before, serverNow, iAborted) {
  const general = "It ended before both sides had made their first move, so it does not count.";
  if (iAborted) return "You aborted it before both sides had made their first move.";
  if (!before || before.status !== "playing") return general;
  const deadline = before.first_move_deadline;
  // The server's timer fires at the deadline; allow for the clock offset estimate.
  if (typeof deadline === "number" && serverNow >= deadline - 1500) {
    const side = before.turn === "white" ? "White" : "Black";
    const name = before.players?.[before.turn]?.name;
    return `${side}${name ? ` (${name})` : ""} did not make a first move in time.`;
  }
  const mine = seatColors(before);
  if (mine.length === 1) return "Your opponent aborted it before both sides had made their first move.";
  return general;
}

/** The PGN-style score of a result ("1-0", "0-1", "½-½", "*"). */
export function resultScore(result) {
  if (!result) return "*";
  if (result.winner === "white") return "1-0";
  if (result.winner === "black") return "0-1";
  if (result.reason === "aborted") return "*";
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
  const aborted = finished && game.result?.reason === "aborted";
  // Abort is possible until both sides have made their first move; a
  // tournament's game is never aborted (resign instead, at any time) and has
  // no rematch: the tournament pairs its players.
  const bothMoved = game.moves.length >= 2;
  const tournament = game.mandatory === true;
  const rematch = !tournament;
  return {
    abort: player && playing && !bothMoved && !tournament,
    resign: player && playing && (bothMoved || tournament),
    // Berserk: in an arena game that allows it, before both sides have moved, once.
    berserk: player && playing && !bothMoved && game.berserk != null && mine.length === 1 && !game.berserk[mine[0]],
    drawOffer: player && playing && online && bothMoved && drawBy === null,
    drawAccept: player && playing && online && drawBy !== null && !mine.includes(drawBy),
    drawDecline: player && playing && online && drawBy !== null && !mine.includes(drawBy),
    drawWithdraw: player && playing && online && drawBy !== null && mine.includes(drawBy),
    // On one screen and against the computer a rematch starts at once (colours swapped).
    // A game that never started has nothing to answer: a new game is offered instead.
    rematchOffer: rematch && player && finished && !aborted && !game.rematch_game_id && (online ? rematchBy === null : true),
    newGame: finished && (aborted || !player) && !tournament,
    rematchAccept: rematch && player && finished && !aborted && online && rematchBy !== null && !mine.includes(rematchBy),
    rematchDecline: rematch && player && finished && online && rematchBy !== null && !mine.includes(rematchBy),
    rematchWithdraw: rematch && player && finished && online && rematchBy !== null && mine.includes(rematchBy),
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

/** Whether the player on this page is to move in a game being played. */
export function mineToMove(game) {
  return Boolean(game && game.status === "playing" && seatColors(game).includes(game.turn));
}

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The status line: whose move, check, a prepared premove and how to clear it
 * (`touch`: the page is used by touch, so no keyboard hint), and the move
 * being reviewed, without hiding that it is the player's move.
 */
export function statusText(game, { reviewPly = null, touch = false } = {}) {
  if (game.status === "finished") return resultText(game.result);
  if (game.status === "open") {
    return seatColors(game).length ? "Waiting for your friend to open the invitation link." : "Joining…";
  }
  let text = mineToMove(game) && game.seat !== "both" ? `Your move (${game.turn})` : `${capital(game.turn)} to move`;
  if (game.check) text += " · check";
  const premove = game.premove ? parseUci(game.premove.uci) : null;
  if (premove) {
    const clear = touch ? "tap an empty square to clear it" : "Escape clears it";
    text += ` · premove ${premove.from}–${premove.to} ready (${clear})`;
  }
  if (reviewPly !== null) {
    text += ` · Reviewing move ${reviewPly} of ${game.moves.length}${touch ? "" : " (End returns to the game)"}`;
  }
  return text;
}

/** How a side is named in sentences: the player's name, or the colour on one screen. */
export function sideName(game, color) {
  const player = game.players?.[color];
  if (game.mode === "local" || !player) return capital(color);
  return player.name;
}

/** The open draw and rematch offers in words ("calm-heron-7 offers a draw."). */
export function offerText(game) {
  const mine = seatColors(game);
  const offers = [];
  const draw = game.offers?.draw;
  const rematch = game.offers?.rematch;
  if (draw && game.status === "playing") {
    offers.push(mine.includes(draw) ? "You offered a draw." : `${sideName(game, draw)} offers a draw.`);
  }
  if (rematch && game.status === "finished") {
    offers.push(
      mine.includes(rematch)
        ? "You offered a rematch. Waiting for an answer…"
        : `${sideName(game, rematch)} offers a rematch.`,
    );
  }
  return offers.join(" ");
}

/** The terms of an open challenge as its creator sees them ("5+0 · you play White"). */
export function challengeTerms(game) {
  const mine = seatColors(game);
  const colour = mine.length === 1 ? ` · you play ${capital(mine[0])}` : "";
  return `${timeControlText(game.time_control, game.mode)}${colour}`;
}
