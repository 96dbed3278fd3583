// A reconnecting WebSocket that resumes from the last version it saw.
//
// No action is lost or doubled by a reconnect: actions sent while the socket
// is down wait in a queue; a move stays pending until the server
// acknowledges its ply and is sent again after a reconnect (the server
// applies a move for a given ply once and acknowledges a repeat the same way).
// Premoves are never replayed: the server clears them when a connection drops.
//
// The socket keeps this bookkeeping itself, from the game socket's messages
// (docs/protocol.md, "Game socket"): the version of the last `state` or new
// `event`, `ack`s, refused moves, and the move list that settles a move.
// Lobby messages carry none of these and leave it untouched.

/**
 * Delays between reconnection attempts, in milliseconds; the last one repeats. Each wait is drawn
 * between half and one and a half times its delay, so that the players of a stopped server do not
 * all come back in the same instant.
 */
export const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000];

/**
 * The first delay after the server closed with 1012 ("service restart"): its node is stopping and
 * the proxy in front sends the next connection to another node (or to this one, back), so come
 * back at once (docs/operations.md, "Restarting nodes with games in progress").
 */
export const RESTART_RECONNECT_DELAY_MS = 100;

export class ReconnectingSocket {
  /**
   * @param {string} url
   * @param {object} options
   * @param {(lastVersion: number|null) => object} options.hello the first message after each (re)connection
   * @param {(msg: object, details: {settledMoves: object[]}) => void} options.onMessage every
   *   parsed server message, after the bookkeeping above; `settledMoves` are the pending
   *   moves this message settled (so the page can tell its own move from the opponent's)
   * @param {(status: "connecting"|"open"|"down"|"closed") => void} [options.onStatus]
   * @param {typeof WebSocket} [options.WebSocket] injected for tests
   * @param {(fn: () => void, ms: number) => any} [options.setTimeout]
   * @param {(id: any) => void} [options.clearTimeout]
   * @param {() => number} [options.random] in [0, 1), for the spread of the retry delays
   * @param {number} [options.silenceMs] a connection that brings no message for this
   *   long counts as lost (a server or network that went silent without closing):
   *   it is dropped and reconnected. Only for sockets that hear regularly from the
   *   server (the game page pings it); unset, no limit.
   */
  constructor(url, options) {
    this.url = url;
    this.hello = options.hello;
    this.onMessage = options.onMessage;
    this.onStatus = options.onStatus ?? (() => {});
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.setTimeout = options.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms));
    this.clearTimeout = options.clearTimeout ?? ((id) => globalThis.clearTimeout(id));
    this.random = options.random ?? Math.random;
    this.lastVersion = null;
    this.queue = [];
    this.pendingMoves = new Map(); // ply -> {msg, acknowledged}, until the move list has that ply
    this.attempt = 0;
    this.ws = null;
    this.retryTimer = null;
    this.closedByUs = false;
    this.status = "closed";
    this.silenceMs = options.silenceMs ?? null;
    this.silenceTimer = null;
  }

  /** Opens the connection (and keeps it open until `close()`). */
  connect() {
    this.closedByUs = false;
    this.#open();
  }

  /** Stops for good: no more reconnection. */
  close() {
    this.closedByUs = true;
    if (this.retryTimer !== null) this.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.#stopSilenceTimer();
    this.ws?.close();
    this.#setStatus("closed");
  }

  /** Drops the current connection as if the network failed (used by tests and on resume). */
  drop() {
    this.ws?.close();
  }

  /** Sends an action now, or as soon as the socket is open again. */
  send(msg) {
    if (this.#isOpen()) this.ws.send(JSON.stringify(msg));
    else this.queue.push(msg);
  }

  /** Sends a message only if the socket is open right now (pings); returns whether it did. */
  trySend(msg) {
    if (!this.#isOpen()) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /**
   * Sends a move that carries its `ply`; it is resent after a reconnect until
   * the server acknowledges that ply, and it is `pendingMove` until the move
   * list has a move at that ply or the server refuses it.
   */
  sendMove(msg) {
    this.pendingMoves.set(msg.ply, { msg, acknowledged: false });
    if (this.#isOpen()) this.ws.send(JSON.stringify(msg));
  }

  /**
   * The newest move sent that the game's move list does not have yet and the
   * server did not refuse (`{type, uci, ply}`), or null: what the page shows
   * ahead of the server's event.
   */
  get pendingMove() {
    let newest = null;
    for (const { msg } of this.pendingMoves.values()) if (newest === null || msg.ply > newest.ply) newest = msg;
    return newest;
  }

  // Applies what `msg` tells about versions and pending moves; returns the
  // moves it settled because the move list now has their ply.
  #track(msg) {
    switch (msg?.type) {
      case "state":
        this.lastVersion = typeof msg.version === "number" ? msg.version : null;
        return Array.isArray(msg.moves) ? this.#settleMovesBelow(msg.moves.length) : [];
      case "event":
        // Before any state the page has nothing to apply an event to (it asks
        // for a state); an event already seen changes nothing either.
        if (this.lastVersion === null || typeof msg.version !== "number" || msg.version <= this.lastVersion) return [];
        this.lastVersion = msg.version;
        return msg.event?.kind === "move" ? this.#settleMovesBelow(msg.event.ply + 1) : [];
      case "premove":
        // A private change has its version too: resuming after it must not
        // replay it (an old "set" would show a premove the server dropped).
        if (this.lastVersion !== null && typeof msg.version === "number" && msg.version > this.lastVersion) {
          this.lastVersion = msg.version;
        }
        return [];
      case "ack": {
        const pending = this.pendingMoves.get(msg.ply);
        if (pending) pending.acknowledged = true;
        return [];
      }
      case "error":
        // The server answers moves in order, so a refusal is for the oldest
        // move it has not acknowledged. A refused move is never resent.
        if (msg.in_reply_to === "move") {
          const refused = [...this.pendingMoves.entries()].filter(([, p]) => !p.acknowledged).map(([ply]) => ply);
          if (refused.length) this.pendingMoves.delete(Math.min(...refused));
        }
        return [];
      default:
        return [];
    }
  }

  // The move list has `count` moves: every pending move below that ply was
  // played (or refused and replaced), so none is resent or shown any more.
  #settleMovesBelow(count) {
    const settled = [];
    for (const [ply, { msg }] of [...this.pendingMoves]) {
      if (ply < count) {
        settled.push(msg);
        this.pendingMoves.delete(ply);
      }
    }
    return settled;
  }

  #isOpen() {
    return this.ws !== null && this.ws.readyState === 1 && this.status === "open";
  }

  #setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    this.onStatus(status);
  }

  // Re-armed by every sign of life from `ws`; when it fires, `ws` is given up
  // without waiting for a close handshake that a dead network never completes.
  #armSilenceTimer(ws) {
    if (this.silenceMs === null) return;
    this.#stopSilenceTimer();
    this.silenceTimer = this.setTimeout(() => {
      this.silenceTimer = null;
      if (this.ws !== ws) return;
      ws.onclose = null;
      ws.onmessage = null;
      try {
        ws.close();
      } catch {
        // Already closing: nothing more to release.
      }
      this.#lost(ws);
    }, this.silenceMs);
  }

  #stopSilenceTimer() {
    if (this.silenceTimer !== null) this.clearTimeout(this.silenceTimer);
    this.silenceTimer = null;
  }

  // The connection `ws` is gone (closed with `code`, if the server said why): reconnect after a
  // growing delay, or at once when the server said it is restarting.
  #lost(ws, code = null) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.#stopSilenceTimer();
    if (this.closedByUs) return;
    this.#setStatus("down");
    const base =
      this.attempt === 0 && code === 1012
        ? RESTART_RECONNECT_DELAY_MS
        : RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)];
    const delay = Math.round(base * (0.5 + this.random()));
    this.attempt += 1;
    this.retryTimer = this.setTimeout(() => this.#open(), delay);
  }

  #open() {
    this.retryTimer = null;
    this.#setStatus(this.attempt === 0 ? "connecting" : "down");
    const ws = new this.WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.#armSilenceTimer(ws);
      ws.send(JSON.stringify(this.hello(this.lastVersion)));
      this.#setStatus("open");
      for (const { msg, acknowledged } of [...this.pendingMoves.values()]) {
        if (!acknowledged) ws.send(JSON.stringify(msg));
      }
      const queued = this.queue.splice(0);
      for (const msg of queued) ws.send(JSON.stringify(msg));
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.#armSilenceTimer(ws);
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return; // the server only sends JSON; ignore anything else rather than crash
      }
      const settledMoves = this.#track(msg);
      this.onMessage(msg, { settledMoves });
    };
    ws.onclose = (event) => this.#lost(ws, event?.code ?? null);
    ws.onerror = () => {
      // A close event always follows an error; reconnection happens there.
    };
  }
}
