// Clocks, display only: the server owns time. Between two server updates
// the running clock counts down locally from the moment the update arrived.

/** Below this many milliseconds a clock shows tenths of a second. */
export const TENTHS_BELOW_MS = 10_000;
/** Below this many milliseconds a clock is shown in its low-time state. */
export const LOW_TIME_MS = 20_000;

/**
 * Formats remaining time: "1:05:00" for an hour or more, "3:07" normally and
 * "0:09.4" under ten seconds. Time is rounded down (never shows more time
 * than is left); negative values show as zero.
 */
export function formatClock(ms) {
  const left = Math.max(0, Math.floor(ms));
  if (left < TENTHS_BELOW_MS) {
    const tenths = Math.floor(left / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const totalSeconds = Math.floor(left / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = String(totalSeconds % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/**
 * Remaining time of each side at local time `now`, from the last server
 * snapshot `clocks` ({white_ms, black_ms, running}) received at local time
 * `receivedAt`. Only the running side loses time.
 */
export function remainingAt(clocks, receivedAt, now) {
  const elapsed = Math.max(0, now - receivedAt);
  return {
    white: clocks.white_ms - (clocks.running === "white" ? elapsed : 0),
    black: clocks.black_ms - (clocks.running === "black" ? elapsed : 0),
  };
}

/** What one clock face shows: text and state flags. */
export function clockFace(ms, running) {
  return {
    text: formatClock(ms),
    running,
    low: ms < LOW_TIME_MS,
    flagged: ms <= 0,
  };
}

/**
 * Drives two clock elements with requestAnimationFrame. `update()` takes the
 * latest server clocks (or null for correspondence: no clocks shown).
 */
export class ClockView {
  /**
   * @param {{white: HTMLElement, black: HTMLElement}} elements
   * @param {{now?: () => number, frame?: (cb: () => void) => number, cancel?: (id: number) => void,
   *   onLow?: (color: string) => void}} deps `onLow` is told once when a running clock falls into low time
   */
  constructor(elements, deps = {}) {
    this.elements = elements;
    this.now = deps.now ?? (() => performance.now());
    this.frame = deps.frame ?? ((cb) => requestAnimationFrame(cb));
    this.cancel = deps.cancel ?? ((id) => cancelAnimationFrame(id));
    this.clocks = null;
    this.receivedAt = 0;
    this.pending = null;
    this.onLow = deps.onLow ?? (() => {});
    this.wasLow = { white: false, black: false };
  }

  /** Takes a new snapshot from the server; null hides the clocks. */
  update(clocks) {
    this.clocks = clocks;
    this.receivedAt = this.now();
    this.#draw();
  }

  /** Draws into other elements (the board was flipped) without touching the time. */
  setElements(elements) {
    this.elements = elements;
    this.#draw();
  }

  /** Stops counting (the game ended or the page is going away). */
  stop() {
    if (this.pending !== null) this.cancel(this.pending);
    this.pending = null;
  }

  #draw() {
    this.stop();
    for (const color of ["white", "black"]) this.elements[color].hidden = !this.clocks;
    if (!this.clocks) return;
    const left = remainingAt(this.clocks, this.receivedAt, this.now());
    for (const color of ["white", "black"]) {
      const face = clockFace(left[color], this.clocks.running === color);
      const el = this.elements[color];
      if (el.textContent !== face.text) el.textContent = face.text;
      el.classList.toggle("running", face.running);
      el.classList.toggle("low", face.low);
      el.classList.toggle("flagged", face.flagged);
      // Once per fall into low time (an increment can lift a clock out of it again).
      if (face.low && face.running && !this.wasLow[color] && !face.flagged) this.onLow(color);
      if (face.running || !face.low) this.wasLow[color] = face.low;
    }
    if (this.clocks.running) this.pending = this.frame(() => this.#draw());
  }
}
