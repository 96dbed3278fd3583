import { test } from "node:test";
import assert from "node:assert/strict";
import { arenaFormBody, arenaItem } from "../js/arena-list.js";

const field = (value) => ({ value });

test("the creation form reads into lichess's field names, with the club when given", () => {
  const form = {
    name: field("  Club night "), clockTime: field("3"), clockIncrement: field("2"), minutes: field("45"),
    waitMinutes: field("5"), rated: { checked: false }, berserkable: { checked: true },
  };
  assert.deepEqual(arenaFormBody(form), {
    name: "Club night", clockTime: 3, clockIncrement: 2, minutes: 45, waitMinutes: 5, rated: false, berserkable: true,
  });
  assert.equal(arenaFormBody(form, "class-7b")["conditions.teamMember.teamId"], "class-7b");
  assert.equal(arenaFormBody({ ...form, name: field("  ") }).name, undefined, "the server names it");
});

test("an arena item links the arena and escapes its name", () => {
  const html = arenaItem({
    id: "abcd1234", full_name: "<b>x</b> Arena", status: "started", starts_at: 0, ends_at: 65_000,
    clock: { base_s: 180, increment_s: 0 }, rated: true, players: 1,
  }, 5_000);
  assert.match(html, /href="\/tournament\/abcd1234"/);
  assert.match(html, /&#60;b&#62;x&#60;\/b&#62; Arena/);
  assert.match(html, /3\+0 · rated · 1 player · 1:00 left/);
});
