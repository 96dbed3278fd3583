// A game of this browser (on one screen, or against the computer) behind the
// interface of the game socket (socket.js), so the game page plays it with
// the code that plays an online game. The game itself is chess-wasm's
// LocalGame (the rules the server enforces, in WebAssembly); it answers the
// page's messages with the messages a server would send. It is saved in this
// browser after every change, so a reload or a closed tab loses nothing; the
// computer's moves come from the engine's worker (engine-client.js).

/** Where a game of this browser is kept (localStorage). */
export const storageKey = (id) => `chess.local.${id}`;

/** The ids of this browser's games, newest first (localStorage). */
export const INDEX_KEY = "chess.local.index";
const INDEX_LIMIT = 50;

/** Keeps `game` (a LocalGame) in `storage` and lists it first in the index. */
export function saveLocalGame(storage, game) {
  storage.setItem(storageKey(game.id), game.save());
  let ids = [];
  try {
    ids = JSON.parse(storage.getItem(INDEX_KEY) ?? "[]");
  } catch {
    ids = [];
  }
  ids = [game.id, ...ids.filter((id) => id !== game.id)];
  for (const dropped of ids.splice(INDEX_LIMIT)) storage.removeItem(storageKey(dropped));
  storage.setItem(INDEX_KEY, JSON.stringify(ids));
}

/**
 * A new game of this browser, saved: `opponent` is `{kind: "one_screen"}` or
 * `{kind: "computer", level, color}` (the computer's colour), `timeControl`
 * a preset (`5+3`, `correspondence`). Returns its page's URL.
 */
export function createLocalGame(chess, storage, { opponent, timeControl, id = crypto.randomUUID(), now = Date.now() }) {
  const game = new chess.LocalGame(id, JSON.stringify(opponent), timeControl, now);
  saveLocalGame(storage, game);
  game.free();
  return `/local/${id}`;
}

/**
 * This browser's games, newest first, as the server lists a player's games
 * (`GET /api/games/mine`: players, status, result, time control, mode, moves,
 * url, your_turn), so the home page lists both alike. Unreadable entries are
 * left out.
 */
export function localGameSummaries(chess, storage, now = Date.now()) {
  let ids = [];
  try {
    ids = JSON.parse(storage.getItem(INDEX_KEY) ?? "[]");
  } catch {
    return [];
  }
  const games = [];
  for (const id of Array.isArray(ids) ? ids : []) {
    const text = storage.getItem(storageKey(id));
    if (text === null) continue;
    let game = null;
    try {
      game = chess.LocalGame.restore(text);
      const state = JSON.parse(game.state(now));
      const playing = state.status === "playing";
      games.push({
        game_id: id,
        url: `/local/${id}`,
        players: state.players,
        status: state.status,
        result: state.result,
        time_control: state.time_control,
        mode: state.mode,
        moves: state.moves.length,
        your_turn: playing && (state.seat === "both" || state.seat === state.turn),
      });
    } catch {
      // A damaged entry is skipped; opening it says why.
    } finally {
      game?.free();
    }
  }
  return games;
}

export class LocalHost {
  /**
   * @param {object} options
   * @param {object} options.chess the loaded chess-wasm module
   * @param {string} options.id the game's id
   * @param {Storage} options.storage where games are kept
   * @param {{search: Function, cancel: Function}} options.engine the engine (EngineClient)
   * @param {(msg: object) => void} options.onMessage as the socket's
   * @param {(status: string) => void} [options.onStatus] as the socket's
   * @param {() => number} [options.now] JavaScript milliseconds
   * @param {() => string} [options.newId] the id of a rematch
   */
  constructor(options) {
    this.chess = options.chess;
    this.id = options.id;
    this.storage = options.storage;
    this.engine = options.engine;
    this.onMessage = options.onMessage;
    this.onStatus = options.onStatus ?? (() => {});
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.setTimeout = options.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms));
    this.clearTimeout = options.clearTimeout ?? ((id) => globalThis.clearTimeout(id));
    this.game = null;
    this.flagTimer = null;
    this.thinking = false;
    this.status = "closed";
  }

  /** Moves are played at once: none is ever waiting for an answer. */
  get pendingMove() {
    return null;
  }

  /** Opens the game from this browser's storage and sends its state. */
  connect() {
    const text = this.storage.getItem(storageKey(this.id));
    if (text === null) {
      this.#setStatus("closed");
      this.#deliver([{ type: "error", code: "local_game_not_found", message: "This game is not stored in this browser." }]);
      return;
    }
    try {
      this.game = this.chess.LocalGame.restore(text);
    } catch (err) {
      this.#setStatus("closed");
      this.#deliver([{ type: "error", code: "local_game_unreadable", message: `This game could not be read back: ${err.message ?? err}` }]);
      return;
    }
    this.#setStatus("open");
    this.#deliver([JSON.parse(this.game.state(this.now()))]);
    this.#afterChange();
  }

  send(msg) {
    this.trySend(msg);
  }

  sendMove(msg) {
    this.trySend(msg);
  }

  /** Plays one of the page's messages; always "sent" (there is no network). */
  trySend(msg) {
    if (!this.game) return false;
    const messages = JSON.parse(this.game.command(JSON.stringify(msg), this.now(), this.newId()));
    this.#afterChange();
    const rematch = this.game.take_rematch();
    if (rematch) {
      // Kept (and listed first) before the page goes there.
      saveLocalGame(this.storage, rematch);
      rematch.free();
    }
    this.#deliver(messages);
    return true;
  }

  close() {
    this.engine?.cancel();
    if (this.flagTimer !== null) this.clearTimeout(this.flagTimer);
    this.flagTimer = null;
    this.game?.free();
    this.game = null;
    this.#setStatus("closed");
  }

  /** The game's PGN, as the server exports one. */
  pgn(date = new Date()) {
    const d = `${date.getFullYear()}.${String(date.getMonth() + 1).padStart(2, "0")}.${String(date.getDate()).padStart(2, "0")}`;
    return this.game?.pgn(d) ?? "";
  }

  /** Saves, sets the flag timer, and asks the computer for its move when it is to move. */
  #afterChange() {
    saveLocalGame(this.storage, this.game);
    this.#armFlag();
    this.#maybeThink();
  }

  #deliver(messages) {
    for (const msg of messages) this.onMessage(msg);
  }

  #setStatus(status) {
    this.status = status;
    this.onStatus(status);
  }

  /** The server flags a fallen clock even when nobody moves; so does this page. */
  #armFlag() {
    if (this.flagTimer !== null) this.clearTimeout(this.flagTimer);
    this.flagTimer = null;
    const deadline = this.game?.flag_deadline();
    if (deadline === undefined || deadline === null) return;
    this.flagTimer = this.setTimeout(() => {
      this.flagTimer = null;
      if (!this.game) return;
      const messages = JSON.parse(this.game.check_time(this.now()));
      this.#afterChange();
      this.#deliver(messages);
    }, Math.max(0, deadline - this.now()));
  }

  async #maybeThink() {
    if (this.thinking || !this.game) return;
    const request = this.game.computer_search(this.now());
    if (!request) return;
    const search = JSON.parse(request);
    this.thinking = true;
    let report = null;
    try {
      report = await this.engine.search(search);
    } catch (err) {
      if (!err?.cancelled) this.#deliver([{ type: "error", code: "engine_failed", message: `The computer could not move: ${err.message ?? err}` }]);
    } finally {
      this.thinking = false;
    }
    if (!this.game || !report?.best_move) return;
    const messages = JSON.parse(this.game.computer_move(report.best_move, search.moves.length, this.now()));
    this.#afterChange();
    this.#deliver(messages);
  }
}
