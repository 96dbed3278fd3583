// The game page: wires the board, input, clocks and socket to the server's
// game (docs/protocol.md, "Game socket"), or, for a game of this browser
// (`/local/<id>`: one screen or the computer), to the same messages from
// local-host.js, which runs the server's rules in WebAssembly. All chess
// decisions come from there; this file keeps the local view state
// (selection, orientation, review position, promotion choice) and turns taps
// into intents.

import { showTournament } from "./game-tournament.js";
import * as api from "./api.js";
import { BoardView, boardModel, applyUci, parseUci, piecesFromFen } from "./board.js";
import { pieceSvg } from "./pieces.js";
import { BoardInput, tapSquare, pressSquare, needsPromotion, promotionChoices, toUci } from "./input.js";
import { ClockView } from "./clock.js";
import { ReconnectingSocket } from "./socket.js";
import { loadChess } from "./chess-wasm.js";
import { EngineClient } from "./engine-client.js";
import { LocalHost } from "./local-host.js";
import { handOverFinished } from "./local-archive.js";
import { showAccountLink, trackHeaderHeight } from "./header.js";
import { Sounds, soundForEvent } from "./sound.js";
import { followLobby, STARTED_KEY } from "./lobby-follow.js";
import { changeLabel, ratingLabel, ratingsKey } from "./ratings.js";
import {
  abortExplanation, applyServerMessage, availableControls, challengeTerms, firstMoveNotice, mineToMove,
  moveRows, offerText, positionAt, resultScore, resultText, seatColors, statusText,
} from "./game-state.js";

const PING_EVERY_MS = 3000;
/** No message from the server for this long: the connection is taken as dead. */
const SILENCE_LIMIT_MS = 2 * PING_EVERY_MS + 1000;
const START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const $ = (sel) => document.querySelector(sel);

const gameId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() ?? "");
/** A game of this browser, kept in its storage, rather than one on the server. */
const inBrowser = location.pathname.startsWith("/local/");

const view = {
  game: null,
  ratings: null, // GET /api/games/{id}/ratings, fetched again when seats fill or the game ends
  ratingsKey: "",
  selected: null,
  orientation: null, // set from the seat on the first state
  reviewPly: null, // null = live position
  promotion: null, // {from, to, kind: "move" | "premove"} while the picker is open
  notice: null,
  joining: false,
  serverOffsetMs: 0, // server clock minus local clock, from `state` and `pong`
  abortedByMe: false, // this page sent `abort`
  abortReason: null, // why the game shown was aborted, once it is
  touch: false, // the last pointer on the page was a finger: no keyboard hints
  premoveRequests: 0, // premove set/cancel requests whose answer has not come back yet
  me: null, // GET /api/me, once known
};

const board = new BoardView($("#board"), $("#coords"));
const sounds = new Sounds();
const clocks = new ClockView(
  { white: document.createElement("span"), black: document.createElement("span") },
  { onLow: (color) => seatColors(view.game).includes(color) && view.game.seat !== "both" && sounds.play("lowTime") },
);
let input = null;
let socket = null;

// ---------------------------------------------------------------- drawing

/** The position and destinations the board shows right now. */
function boardInput() {
  const g = view.game;
  const live = view.reviewPly === null;
  const pos = positionAt(g, live ? g.moves.length : view.reviewPly);
  let { pieces, lastMove, check } = pos;
  let dests = live ? g.dests ?? {} : {};
  let premoveDests = live ? g.premove_dests ?? {} : {};
  const pendingMove = socket.pendingMove;
  if (live && pendingMove) {
    // Show our move at once; the server's event confirms it a moment later.
    pieces = applyUci(pieces, pendingMove.uci);
    lastMove = parseUci(pendingMove.uci);
    check = null;
    dests = {};
  }
  if (view.promotion) {
    dests = {};
    premoveDests = {};
  }
  const premove = live && g.premove ? parseUci(g.premove.uci) : null;
  return { pieces, lastMove, check, dests, premoveDests, premove };
}

function render(animate = null) {
  const g = view.game;
  if (!g) return;
  const b = boardInput();
  const initialPieces = g.initial_fen && g.initial_fen !== START_FEN ? piecesFromFen(g.initial_fen) : null;
  const model = boardModel({ ...b, initialPieces, selected: view.selected, orientation: view.orientation });
  board.render(model, animate);
  input.refreshFocus();
  document.body.dataset.turn = g.turn;
  renderPlayers(model.captured);
  renderStatus();
  renderDeadline();
  renderMoves();
  const players = `${playerName(g.players?.white, "white")} vs ${playerName(g.players?.black, "black")}`;
  const started = document.hidden && sessionStorage.getItem(STARTED_KEY) === gameId ? "Your game started · " : "";
  document.title = `${started}${mineToMove(g) && g.seat !== "both" ? "Your move · " : ""}${players} · Chess`;
  $("#game-title").textContent = `Chess game: ${players}`;
  renderControls();
  renderResult();
  renderInvite();
  renderPromotion();
  $("#notice").hidden = !view.notice;
  $("#notice").textContent = view.notice ?? "";
}

function playerName(p, color) {
  if (!p) return `Waiting for a player (${color})`;
  // On one screen both seats are the same person: name the sides instead.
  if (view.game.mode === "local") return color.charAt(0).toUpperCase() + color.slice(1);
  return p.is_you && view.game.seat !== "both" ? `${p.name} (you)` : p.name;
}

/** The players' ratings (`1523?`) and, once a rated game is over, the change (`+7`). */
function renderRating(el, color) {
  if (!el) return;
  const rating = view.ratings?.[color];
  const change = changeLabel(rating?.change);
  el.textContent = ratingLabel(rating) + (change ? ` ${change}` : "");
  el.dataset.change = change;
  el.hidden = !rating;
  // A game of this browser has no ratings (nor anything else on the server).
  const key = inBrowser ? null : ratingsKey(view.game);
  if (key && key !== view.ratingsKey) {
    view.ratingsKey = key;
    api.gameRatings(gameId).then(
      (ratings) => {
        if (view.ratingsKey !== key) return;
        view.ratings = ratings;
        render();
      },
      () => {},
    );
  }
}

function renderPlayers(captured) {
  const g = view.game;
  if (g.mandatory) showTournament(gameId, g.status === "finished");
  const bottom = view.orientation;
  const top = bottom === "white" ? "black" : "white";
  for (const [slot, color] of [["#player-top", top], ["#player-bottom", bottom]]) {
    const el = $(slot);
    el.dataset.color = color;
    el.querySelector(".name").textContent = playerName(g.players?.[color], color);
    el.querySelector(".berserked").hidden = !g.berserk?.[color];
    renderRating(el.querySelector(".rating"), color);
    // The pieces this side has taken, and its material lead if it has one.
    const taken = color === "white" ? captured.byWhite : captured.byBlack;
    const lead = color === "white" ? captured.advantage : -captured.advantage;
    const enemy = color === "white" ? "black" : "white";
    el.querySelector(".captured").innerHTML =
      `<span class="visually-hidden">Captured: ${taken.length ? taken.join(", ") : "none"}</span>` +
      taken.map((role) => `<span class="piece mini ${enemy} ${role}" aria-hidden="true">${pieceSvg(role)}</span>`).join("") +
      (lead > 0 ? `<span class="lead">+${lead}</span>` : "");
    el.querySelector(".clock").dataset.color = color;
  }
  const white = $(`.player[data-color="white"] .clock`);
  const black = $(`.player[data-color="black"] .clock`);
  if (clocks.elements.white !== white) {
    // The board was flipped: the other clock elements show the same times.
    for (const el of [white, black]) el.classList.remove("running", "low", "flagged");
    clocks.setElements({ white, black });
  }
}

function renderStatus() {
  const g = view.game;
  const el = $("#status");
  el.classList.toggle("finished", g.status === "finished");
  el.textContent = statusText(g, { reviewPly: view.reviewPly, touch: view.touch });
}

/** The end of the game, prominent: score, result, why, and what to do next. */
function renderResult() {
  const g = view.game;
  const el = $("#result");
  el.hidden = g.status !== "finished";
  if (el.hidden) return;
  $("#result-score").textContent = resultScore(g.result) === "*" ? "–" : resultScore(g.result);
  $("#result-text").textContent = resultText(g.result);
  const aborted = g.result?.reason === "aborted";
  $("#result-reason").hidden = !aborted;
  if (aborted) $("#result-reason").textContent = view.abortReason ?? abortExplanation(null, 0, false);
}

/** While a challenge waits for its second player: the invitation, its time control and colour. */
function renderInvite() {
  const g = view.game;
  const waiting = g.status === "open" && seatColors(g).length > 0;
  $("#invite").hidden = !waiting;
  if (!waiting) return;
  $("#invite-terms").textContent = challengeTerms(g);
  if ($("#invite-url").value !== location.href) $("#invite-url").value = location.href;
}

function renderDeadline() {
  const el = $("#deadline");
  const text = firstMoveNotice(view.game, Date.now() + view.serverOffsetMs);
  el.hidden = !text;
  if (text && el.textContent !== text) el.textContent = text;
}

function renderMoves() {
  const g = view.game;
  const list = $("#moves");
  const current = view.reviewPly === null ? g.moves.length : view.reviewPly;
  list.replaceChildren(
    ...moveRows(g).map((row) => {
      const li = document.createElement("li");
      li.value = row.number;
      for (const half of [row.white, row.black]) {
        if (!half) {
          // A half-move not played (yet): a placeholder, not a button without a name.
          const gap = document.createElement("span");
          gap.className = "move empty";
          gap.textContent = row.white ? "" : "…";
          li.appendChild(gap);
          continue;
        }
        const btn = document.createElement("button");
        btn.type = "button";
        btn.className = "move";
        btn.textContent = half.san;
        btn.dataset.ply = String(half.ply);
        if (half.ply + 1 === current) btn.classList.add("current");
        li.appendChild(btn);
      }
      return li;
    }),
  );
  // Keep the current move visible inside the list without scrolling the page.
  const cur = list.querySelector(".current");
  if (cur) {
    const top = cur.offsetTop; // .moves is positioned, so this is relative to the list
    if (top < list.scrollTop || top + cur.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }
}

function renderControls() {
  const c = availableControls(view.game);
  const show = {
    abort: c.abort, resign: c.resign, berserk: c.berserk, draw_offer: c.drawOffer, draw_accept: c.drawAccept,
    draw_decline: c.drawDecline, draw_withdraw: c.drawWithdraw, takeback: c.takeback,
    rematch_offer: c.rematchOffer, rematch_accept: c.rematchAccept, rematch_decline: c.rematchDecline,
    rematch_withdraw: c.rematchWithdraw,
  };
  for (const btn of document.querySelectorAll(".side [data-action]")) {
    btn.hidden = !show[btn.dataset.action];
  }
  $("#new-game").hidden = !c.newGame;
  if (!c.resign) $("#confirm-resign").hidden = true;
  $("#offers").textContent = offerText(view.game);
}

function renderPromotion() {
  const el = $("#promotion");
  const p = view.promotion;
  el.hidden = !p;
  if (!p) return el.replaceChildren();
  const pieceColor = p.color;
  el.innerHTML = promotionChoices(p.to, view.orientation)
    .map(
      (c) =>
        `<button type="button" class="promo-choice" data-role="${c.role}" data-col="${c.col}" data-row="${c.row}" aria-label="Promote to ${c.role}">` +
        `<span class="piece ${pieceColor} ${c.role}" aria-hidden="true">${pieceSvg(c.role)}</span></button>`,
    )
    .join("");
  // Placed through the style object: the Content-Security-Policy refuses
  // style attributes in markup.
  for (const button of el.querySelectorAll(".promo-choice")) {
    button.style.left = `${button.dataset.col * 12.5}%`;
    button.style.top = `${button.dataset.row * 12.5}%`;
  }
  el.querySelector("button")?.focus();
}

// ---------------------------------------------------------------- intents

function sendMove(from, to, promotion = null) {
  socket.sendMove({ type: "move", uci: toUci(from, to, promotion), ply: view.game.moves.length });
}

/** A move or premove chosen on the board: opens the picker when a pawn promotes. */
function intend(kind, from, to) {
  const piece = positionAt(view.game, view.game.moves.length).pieces.get(from);
  view.selected = null;
  if (needsPromotion(piece, to)) {
    view.promotion = { kind, from, to, color: piece.color };
    render();
    return;
  }
  if (kind === "move") {
    sendMove(from, to);
    render({ from, to });
  } else {
    setPremove(toUci(from, to));
  }
}

/**
 * Prepares a premove. Never queued while the connection is down: the server
 * clears a player's premove when their connection drops, so one sent after
 * the reconnection would surprise the player.
 */
function setPremove(uci) {
  if (socket.trySend({ type: "premove", uci })) {
    view.premoveRequests += 1;
    view.game = { ...view.game, premove: { uci } };
  } else {
    view.notice = "Not connected: the premove was not set.";
  }
  render();
}

function choosePromotion(role) {
  const p = view.promotion;
  view.promotion = null;
  if (p.kind === "move") {
    sendMove(p.from, p.to, role);
    render();
  } else {
    setPremove(toUci(p.from, p.to, role));
  }
}

function selectionState() {
  const b = boardInput();
  return { selected: view.selected, dests: b.dests, premoveDests: b.premoveDests, hasPremove: Boolean(view.game?.premove) };
}

function handleTap(square) {
  if (!view.game || view.promotion) return;
  const result = tapSquare(selectionState(), square);
  if (result.clearPremove) cancelPremove();
  if (result.play) return intend("move", result.play.from, result.play.to);
  if (result.premove) return intend("premove", result.premove.from, result.premove.to);
  view.selected = result.selected;
  render();
}

function cancelPremove() {
  if (!view.game?.premove) return;
  // When down, the server has cleared it already.
  if (socket.trySend({ type: "cancel_premove" })) view.premoveRequests += 1;
  view.game = { ...view.game, premove: null };
}

function escape() {
  if (view.promotion) view.promotion = null;
  else if (view.selected) view.selected = null;
  else cancelPremove();
  render();
}

const owner = {
  tap: handleTap,
  drop(from, to) {
    if (!view.game || view.promotion) return;
    const state = { ...selectionState(), selected: from };
    const result = tapSquare(state, to);
    if (result.play) return intend("move", from, to);
    if (result.premove) return intend("premove", from, to);
    view.selected = null;
    render();
  },
  pressStart(square) {
    if (!view.game || view.promotion) return false;
    const result = pressSquare(selectionState(), square);
    if (!result) return false;
    if (result.clearPremove) cancelPremove();
    view.selected = result.selected;
    render();
    return true;
  },
  isSelected: (square) => view.selected === square,
  escape,
  orientation: () => view.orientation ?? "white",
};

function setReview(ply) {
  const g = view.game;
  if (!g) return;
  const clamped = Math.max(0, Math.min(g.moves.length, ply));
  view.reviewPly = clamped >= g.moves.length ? null : clamped;
  view.selected = null;
  render();
}

function flip() {
  view.orientation = view.orientation === "white" ? "black" : "white";
  view.selected = null;
  render();
}

// ---------------------------------------------------------------- server messages

/** `settledMoves`: this page's moves that the message shows played (from the socket). */
function onServerMessage(msg, { settledMoves = [] } = {}) {
  const before = view.game;
  if (msg.type === "state" && typeof msg.server_time === "number") view.serverOffsetMs = msg.server_time - Date.now();
  if (msg.type === "pong" && typeof msg.server_time === "number" && typeof msg.t === "number") {
    // The server read its clock about halfway through the round trip.
    view.serverOffsetMs = msg.server_time - (msg.t + Date.now()) / 2;
  }
  if (msg.type === "premove" && (msg.reason === "set" || msg.reason === "cancelled") && view.premoveRequests > 0) {
    view.premoveRequests -= 1;
    // The answer to a request the player has since overridden (set, then Escape):
    // showing it would bring back, for a moment, a premove they just cleared.
    if (view.premoveRequests > 0) return;
  }
  if (msg.type === "state") view.premoveRequests = 0;
  const { game, effects } = applyServerMessage(view.game, msg);
  view.game = game;
  if (msg.type === "event" && game && game.version !== before?.version) {
    const ended = msg.event?.kind === "ended";
    if (ended && inBrowser) keepInArchive();
    if (ended && game.result?.reason === "aborted") {
      view.abortReason = abortExplanation(before, Date.now() + view.serverOffsetMs, view.abortedByMe);
    }
    // Players hear their game; spectators watch in silence.
    if (seatColors(game).length) {
      const sound = soundForEvent(msg);
      if (sound) sounds.play(sound);
    }
  }
  let animate = null;
  for (const effect of effects) {
    switch (effect.kind) {
      case "resync":
        socket.send({ type: "hello", version: before?.version ?? null });
        break;
      case "moved": {
        // Our own move is on the board already: no animation from its old square.
        const wasOurs = settledMoves.some((m) => game.moves[m.ply]?.uci === m.uci);
        if (!wasOurs) animate = { from: effect.from, to: effect.to };
        break;
      }
      case "redirect":
        location.assign(effect.url);
        return;
      case "premove":
        if (effect.reason === "dropped_illegal") view.notice = "Your premove was dropped: it was not legal after the opponent's move.";
        else if (effect.reason === "disconnected") view.notice = "Your premove was cleared when the connection dropped.";
        else if (effect.reason === "played") view.notice = null;
        break;
      case "error":
        if (effect.code !== "rate_limited") view.notice = effect.message || effect.code;
        break;
      default:
        break;
    }
  }
  if (!game) {
    // Nothing to show: say why (a game of this browser that it does not hold).
    if (msg.type === "error") $("#status").textContent = msg.message || msg.code;
    return;
  }
  if (msg.type === "state" || msg.type === "event") {
    // Clocks are redrawn from the moment this message arrived; render() must not reset them.
    clocks.update(game.clocks ?? null);
  }
  if (msg.type === "state" || msg.type === "event") {
    // A new move makes older notices stale (a dropped premove is reported just after it).
    if (msg.type === "event" && msg.event?.kind === "move") view.notice = null;
    // The player's own side at the bottom: on the first state, and when the seat
    // changes (a spectator who just took a challenge's empty seat).
    if (view.orientation === null || (before && before.seat !== game.seat)) {
      view.orientation = game.seat === "black" ? "black" : "white";
    }
    if (view.selected && !(game.dests?.[view.selected] || game.premove_dests?.[view.selected])) view.selected = null;
    if (game.status !== "playing") view.promotion = null;
    maybeJoinChallenge();
  }
  render(animate);
}

async function maybeJoinChallenge() {
  const g = view.game;
  if (g.status !== "open" || g.seat !== "none" || view.joining) return;
  view.joining = true;
  try {
    await api.joinGame(gameId);
    // The server sends everyone a fresh state; ask for it too in case it raced the join.
    socket.send({ type: "hello", version: null });
  } catch (err) {
    view.notice = `Could not join this game: ${err.message}`;
    render();
  }
}

function onSocketStatus(status) {
  const el = $("#connection");
  el.hidden = status === "open" || status === "connecting" || status === "closed";
  document.body.dataset.connection = status;
  if (status === "down" && view.game) {
    // The server clears premoves on disconnect; show that at once.
    if (view.game.premove) view.notice = "Your premove was cleared when the connection dropped.";
    view.game = { ...view.game, premove: null };
    render();
  }
}

// ---------------------------------------------------------------- page wiring

function wireControls() {
  const onAction = (e) => {
    const action = e.target.closest("[data-action]")?.dataset.action;
    if (!action) return;
    if (action === "resign") {
      $("#confirm-resign").hidden = false;
      $("#resign-yes").focus();
      return;
    }
    if (action === "takeback") view.selected = null;
    if (action === "abort") view.abortedByMe = true;
    socket.send({ type: action });
  };
  for (const el of document.querySelectorAll("#controls, #controls-play")) el.addEventListener("click", onAction);
  $("#resign-yes").addEventListener("click", () => {
    socket.send({ type: "resign" });
    $("#confirm-resign").hidden = true;
  });
  $("#resign-no").addEventListener("click", () => ($("#confirm-resign").hidden = true));
  $("#moves").addEventListener("click", (e) => {
    const ply = e.target.closest("[data-ply]")?.dataset.ply;
    if (ply !== undefined) setReview(Number(ply) + 1);
  });
  const current = () => (view.reviewPly === null ? view.game?.moves.length ?? 0 : view.reviewPly);
  $("#review-start").addEventListener("click", () => setReview(0));
  $("#review-back").addEventListener("click", () => setReview(current() - 1));
  $("#review-forward").addEventListener("click", () => setReview(current() + 1));
  $("#review-end").addEventListener("click", () => setReview(Infinity));
  $("#flip").addEventListener("click", flip);
  $("#promotion").addEventListener("click", (e) => {
    const role = e.target.closest("[data-role]")?.dataset.role;
    if (role) choosePromotion(role);
  });
  $("#promotion").addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      escape();
      board.cell(view.selected ?? "e2")?.focus();
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest?.("input, textarea, select")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "f" || e.key === "F") flip();
    else if (e.key === "ArrowLeft") setReview(current() - 1);
    else if (e.key === "ArrowRight") setReview(current() + 1);
    else if (e.key === "Home") setReview(0);
    else if (e.key === "End") setReview(Infinity);
    else if (e.key === "Escape") escape();
    else return;
    e.preventDefault();
  });
  if (inBrowser) {
    // The PGN is written here, from the game in this browser.
    $("#download-pgn").download = `${gameId}.pgn`;
    $("#download-pgn").addEventListener("click", (e) => {
      const blob = new Blob([socket.pgn()], { type: "application/x-chess-pgn" });
      e.currentTarget.href = URL.createObjectURL(blob);
    });
    $("#copy-link").hidden = true;
  } else {
    $("#download-pgn").href = api.pgnUrl(gameId);
  }
  $("#copy-pgn").addEventListener("click", async () => {
    const text = inBrowser ? socket.pgn() : await (await fetch(api.pgnUrl(gameId))).text();
    await copyText(text, "PGN copied.");
  });
  $("#copy-link").addEventListener("click", () => copyText(location.href, "Link copied: anyone who opens it can watch."));
  $("#copy-invite").addEventListener("click", () => copyText(location.href, "Invitation link copied: send it to your friend."));
  const soundBtn = $("#sound-toggle");
  const soundLabel = () => {
    soundBtn.setAttribute("aria-pressed", String(!sounds.muted));
    soundBtn.title = sounds.muted ? "Sounds off (click to turn on)" : "Sounds on (click to mute)";
  };
  soundLabel();
  soundBtn.addEventListener("click", () => {
    sounds.muted = !sounds.muted;
    soundLabel();
  });
  // Keyboard hints make no sense to a finger.
  document.addEventListener("pointerdown", (e) => {
    const touch = e.pointerType === "touch";
    if (touch !== view.touch) {
      view.touch = touch;
      if (view.game) renderStatus();
    }
  }, true);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && sessionStorage.getItem(STARTED_KEY) === gameId) {
      sessionStorage.removeItem(STARTED_KEY);
      if (view.game) render();
    }
  });
  const themeBtn = $("#theme-toggle");
  const label = () => (themeBtn.textContent = document.documentElement.dataset.theme === "classic" ? "Blue and pink pieces" : "Classic pieces");
  label();
  themeBtn.addEventListener("click", () => {
    api.setTheme(document.documentElement.dataset.theme === "classic" ? "candy" : "classic");
    label();
  });
}

async function copyText(text, done) {
  try {
    await navigator.clipboard.writeText(text);
    view.notice = done;
  } catch {
    view.notice = "Copy failed: select the text and copy it yourself.";
  }
  render();
}

function serverSocket() {
  return new ReconnectingSocket(api.socketUrl(`/api/games/${encodeURIComponent(gameId)}/socket`), {
    hello: (version) => ({ type: "hello", version }),
    onMessage: onServerMessage,
    onStatus: onSocketStatus,
    // The server answers every ping: hearing nothing for a while means the
    // connection died without closing (a lost signal); reconnect then.
    silenceMs: SILENCE_LIMIT_MS,
  });
}

/** A signed-in player's finished game of this browser goes to their archive. */
function keepInArchive() {
  if (view.me?.kind !== "account") return;
  loadChess()
    .then((chess) => handOverFinished({ chess, storage: localStorage, username: view.me.name, upload: api.uploadGame }))
    .catch(() => {});
}

/** The game of this browser behind the socket's interface, or null when the rules do not load. */
async function localHost() {
  try {
    const chess = await loadChess();
    return new LocalHost({
      chess,
      id: gameId,
      storage: localStorage,
      engine: new EngineClient(),
      onMessage: onServerMessage,
      onStatus: onSocketStatus,
    });
  } catch (err) {
    $("#status").textContent = `This browser could not load the rules of the game: ${err.message ?? err}`;
    return null;
  }
}

async function main() {
  if (!gameId) {
    $("#status").textContent = "No game id in the address.";
    return;
  }
  try {
    view.me = await api.me();
    showAccountLink(view.me);
  } catch {
    // Watching needs no identity; playing will report its own error.
  }
  input = new BoardInput($("#board"), owner);
  wireControls();
  socket = inBrowser ? await localHost() : serverSocket();
  if (!socket) return;
  socket.connect();
  trackHeaderHeight();
  // A challenge of this person's started elsewhere: go there, unless busy playing here.
  followLobby({
    sounds,
    stay: (startedId) => startedId === gameId || (view.game?.status === "playing" && seatColors(view.game).length > 0),
  });
  setInterval(() => socket.trySend({ type: "ping", t: Date.now() }), PING_EVERY_MS);
  setInterval(() => view.game && renderDeadline(), 250);
  // For the end-to-end tests: a way to simulate a dropped network.
  window.__chess = { socket, view, sounds };
}

main();
