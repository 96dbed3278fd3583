import { test } from "node:test";
import assert from "node:assert/strict";
import { Sounds, soundForEvent, SOUND_KEY } from "../js/sound.js";

function memoryStorage() {
  const map = new Map();
  return { getItem: (k) => map.get(k) ?? null, setItem: (k, v) => map.set(k, String(v)) };
}

/** Counts the tones started on a stand-in AudioContext. */
function fakeContext() {
  const ctx = {
    currentTime: 0,
    state: "running",
    destination: {},
    started: [],
    createOscillator: () => ({
      frequency: {},
      connect: (gain) => gain,
      start: (at) => ctx.started.push(at),
      stop: () => {},
    }),
    createGain: () => ({ gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect: (d) => d }),
  };
  return ctx;
}

const move = (san) => ({ type: "event", event: { kind: "move", san } });

test("each game event has its sound: the end over a check, a check over a capture", () => {
  assert.equal(soundForEvent(move("e4")), "move");
  assert.equal(soundForEvent(move("exd5")), "capture");
  assert.equal(soundForEvent(move("Bxf7+")), "check");
  assert.equal(soundForEvent(move("Qxf7#")), "check");
  assert.equal(soundForEvent({ type: "event", event: { kind: "ended", result: {} } }), "gameEnd");
  assert.equal(soundForEvent({ type: "event", event: { kind: "draw_offered" } }), null);
  assert.equal(soundForEvent({ type: "state" }), null);
});

test("silent until the person interacts, then audible unless muted; the switch is remembered", () => {
  const target = new EventTarget();
  const storage = memoryStorage();
  const ctx = fakeContext();
  const sounds = new Sounds({ target, storage, createContext: () => ctx });
  assert.equal(sounds.play("move"), false, "no sound before any interaction");
  assert.equal(ctx.started.length, 0);
  target.dispatchEvent(new Event("pointerdown"));
  assert.equal(sounds.play("capture"), true);
  assert.equal(ctx.started.length, 2, "capture is two tones");

  sounds.muted = true;
  assert.equal(storage.getItem(SOUND_KEY), "off");
  assert.equal(sounds.play("move"), false);
  const later = new Sounds({ target: new EventTarget(), storage, createContext: () => ctx });
  assert.equal(later.muted, true, "a new page reads the remembered switch");
  assert.deepEqual(
    sounds.log.map((entry) => `${entry.name}:${entry.audible}`),
    ["move:false", "capture:true", "move:false"],
  );
  assert.equal(sounds.play("no-such-sound"), false);
});
