// A reconnecting WebSocket that resumes from the last version it saw.
//
// No action is lost or doubled by a reconnect: actions sent while the socket
// is down wait in a queue; a move stays pending until the server
// acknowledges its ply and is sent again after a reconnect (the server
// applies a move for a given ply once and acknowledges a repeat the same way).
// Premoves are never replayed: the server clears them when a connection drops.

/** Delays between reconnection attempts, in milliseconds; the last one repeats. */
export const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000];

export class ReconnectingSocket {
  /**
   * @param {string} url
   * @param {object} options
   * @param {(lastVersion: number|null) => object} options.hello the first message after each (re)connection
   * @param {(msg: object) => void} options.onMessage every parsed server message
   * @param {(status: "connecting"|"open"|"down"|"closed") => void} [options.onStatus]
   * @param {typeof WebSocket} [options.WebSocket] injected for tests
   * @param {(fn: () => void, ms: number) => any} [options.setTimeout]
   * @param {(id: any) => void} [options.clearTimeout]
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
    this.lastVersion = null;
    this.queue = [];
    this.pendingMoves = new Map(); // ply -> message, until acknowledged
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
   * the server acknowledges that ply (see `acknowledge`).
   */
  sendMove(msg) {
    this.pendingMoves.set(msg.ply, msg);
    if (this.#isOpen()) this.ws.send(JSON.stringify(msg));
  }

  /** The server acknowledged (or otherwise settled) the move for `ply`. */
  acknowledge(ply) {
    this.pendingMoves.delete(ply);
  }

  /** Forgets every pending move (after a full resync shows they were played or refused). */
  settleMovesBelow(ply) {
    for (const p of [...this.pendingMoves.keys()]) if (p < ply) this.pendingMoves.delete(p);
  }

  /** Records the version of a state or event the client has applied. */
  sawVersion(version) {
    if (typeof version === "number" && (this.lastVersion === null || version > this.lastVersion)) {
      this.lastVersion = version;
    }
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

  // The connection `ws` is gone: reconnect after a growing delay.
  #lost(ws) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.#stopSilenceTimer();
    if (this.closedByUs) return;
    this.#setStatus("down");
    const delay = RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)];
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
      for (const msg of [...this.pendingMoves.values()]) ws.send(JSON.stringify(msg));
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
      this.onMessage(msg);
    };
    ws.onclose = () => this.#lost(ws);
    ws.onerror = () => {
      // A close event always follows an error; reconnection happens there.
    };
  }
}
