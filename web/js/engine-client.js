// The page's side of the engine's worker (engine-worker.js): one search at a
// time; a newer search or `cancel()` ends a running one by ending its worker
// (a search cannot be interrupted from outside), and the next search starts a
// fresh worker.

const WORKER_URL = "/js/engine-worker.js";

export class EngineClient {
  /**
   * @param {object} [options]
   * @param {(url: string) => Worker} [options.makeWorker] for the tests
   */
  constructor(options = {}) {
    this.makeWorker = options.makeWorker ?? ((url) => new Worker(url, { type: "module" }));
    this.worker = null;
    this.nextId = 1;
    this.running = null; // {id, resolve, reject, onIteration}
  }

  /**
   * Searches `request` (chess-wasm's SearchRequest); resolves with the final
   * report, or rejects when the engine refuses it or the search is cancelled.
   * `onIteration(report)` hears each completed depth.
   */
  search(request, { onIteration = () => {} } = {}) {
    if (this.running) this.cancel();
    const worker = this.#worker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.running = { id, resolve, reject, onIteration };
      worker.postMessage({ type: "search", id, request });
    });
  }

  /** Ends the running search, if any (its promise rejects with `cancelled`). */
  cancel() {
    const running = this.running;
    if (!running) return;
    this.running = null;
    this.worker?.terminate();
    this.worker = null;
    running.reject(Object.assign(new Error("cancelled"), { cancelled: true }));
  }

  /** Ends the worker for good (the page is leaving). */
  close() {
    this.cancel();
    this.worker?.terminate();
    this.worker = null;
  }

  #worker() {
    if (this.worker) return this.worker;
    const worker = this.makeWorker(WORKER_URL);
    worker.onmessage = (e) => this.#onMessage(e.data);
    worker.onerror = (e) => {
      const running = this.running;
      this.running = null;
      this.worker = null;
      worker.terminate();
      running?.reject(new Error(`the engine stopped: ${e.message ?? e}`));
    };
    this.worker = worker;
    return worker;
  }

  #onMessage(msg) {
    const running = this.running;
    if (!running || msg.id !== running.id) return;
    if (msg.type === "iteration") running.onIteration(msg.report);
    else if (msg.type === "done") {
      this.running = null;
      running.resolve(msg.report);
    } else if (msg.type === "error") {
      this.running = null;
      running.reject(new Error(msg.message));
    }
  }
}
