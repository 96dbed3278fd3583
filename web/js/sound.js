// Game sounds, synthesized with the Web Audio API: a few short tones need no
// files to ship, cache or decode, and start at once. Browsers forbid sound
// before the person has interacted with the page; this module also stays
// silent until then, and a mute switch is remembered by the browser.

/** localStorage key of the mute switch ("off" = muted). */
export const SOUND_KEY = "chess.sound";

/**
 * Each sound as notes: [frequency in Hz, start in s, length in s, waveform].
 * Kept short and soft: they accompany play, they do not announce it.
 */
export const SOUNDS = {
  move: [[520, 0, 0.07, "triangle"]],
  capture: [[330, 0, 0.06, "square"], [220, 0.05, 0.09, "triangle"]],
  check: [[880, 0, 0.09, "triangle"], [660, 0.1, 0.12, "triangle"]],
  lowTime: [[990, 0, 0.08, "sine"], [990, 0.16, 0.08, "sine"], [990, 0.32, 0.08, "sine"]],
  gameEnd: [[523, 0, 0.12, "triangle"], [659, 0.12, 0.12, "triangle"], [784, 0.24, 0.25, "triangle"]],
  gameStart: [[392, 0, 0.1, "triangle"], [587, 0.1, 0.18, "triangle"]],
};

/**
 * The sound for one game `event` message seen by a player, or null:
 * the end of the game wins over a check, a check over a capture.
 */
export function soundForEvent(msg) {
  const ev = msg?.event;
  if (!ev) return null;
  if (ev.kind === "ended") return "gameEnd";
  if (ev.kind !== "move") return null;
  if (/[+#]$/.test(ev.san ?? "")) return "check";
  if ((ev.san ?? "").includes("x")) return "capture";
  return "move";
}

export class Sounds {
  /**
   * @param {object} [deps] injected for tests
   * @param {Storage} [deps.storage]
   * @param {EventTarget} [deps.target] where the first interaction is heard
   * @param {() => AudioContext} [deps.createContext]
   */
  constructor(deps = {}) {
    this.storage = deps.storage ?? globalThis.localStorage;
    this.createContext = deps.createContext ?? (() => new AudioContext());
    this.context = null;
    this.interacted = false;
    /** Every request, for the page's tests: {name, audible}. */
    this.log = [];
    const target = deps.target ?? globalThis.document;
    const unlock = () => {
      this.interacted = true;
      for (const type of ["pointerdown", "keydown"]) target.removeEventListener(type, unlock, true);
    };
    for (const type of ["pointerdown", "keydown"]) target.addEventListener(type, unlock, true);
  }

  get muted() {
    return this.storage?.getItem(SOUND_KEY) === "off";
  }

  set muted(value) {
    this.storage?.setItem(SOUND_KEY, value ? "off" : "on");
  }

  /** Plays `name` when allowed; returns whether it was audible. */
  play(name) {
    const notes = SOUNDS[name];
    const audible = Boolean(notes) && this.interacted && !this.muted;
    this.log.push({ name, audible });
    if (!audible) return false;
    try {
      this.context ??= this.createContext();
      if (this.context.state === "suspended") this.context.resume();
      const start = this.context.currentTime + 0.01;
      for (const [frequency, at, length, type] of notes) this.#note(start + at, frequency, length, type);
    } catch {
      return false; // no audio device: play silently
    }
    return true;
  }

  #note(at, frequency, length, type) {
    const ctx = this.context;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = type;
    osc.frequency.value = frequency;
    // A quick attack and an exponential fade: a soft click-free tone.
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.18, at + 0.008);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(at);
    osc.stop(at + length + 0.02);
  }
}
