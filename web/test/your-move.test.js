import { test } from "node:test";
import assert from "node:assert/strict";
import { countedTitle, newlyYourMove, sinceText, yourMoveGames } from "../js/your-move.js";

const game = (id, fields) => ({ game_id: id, status: "playing", your_turn: true, last_move_at: 0, ...fields });

test("only playing games where it is your move, the longest waiting first", () => {
  const games = [
    game("new", { last_move_at: 300 }),
    game("theirs", { your_turn: false }),
    game("over", { status: "finished" }),
    game("old", { last_move_at: 100 }),
    game("open", { status: "open" }),
  ];
  assert.deepEqual(yourMoveGames(games).map((g) => g.game_id), ["old", "new"]);
});

test("the title counts the games and loses the count at zero", () => {
  assert.equal(countedTitle("Chess: play online", 2), "(2) Chess: play online");
  assert.equal(countedTitle("(2) Chess: play online", 3), "(3) Chess: play online");
  assert.equal(countedTitle("(3) Chess: play online", 0), "Chess: play online");
});

test("time since the opponent moved, in words", () => {
  const now = 10 * 86_400_000;
  assert.equal(sinceText(now - 5_000, now), "just now");
  assert.equal(sinceText(now - 60_000, now), "1 minute ago");
  assert.equal(sinceText(now - 5 * 60_000, now), "5 minutes ago");
  assert.equal(sinceText(now - 3 * 3_600_000, now), "3 hours ago");
  assert.equal(sinceText(now - 3 * 86_400_000, now), "3 days ago");
  assert.equal(sinceText(undefined, now), "");
});

test("a game is new to notify only when it was not your move before", () => {
  const before = [game("a")];
  const now = [game("a"), game("b")];
  assert.deepEqual(newlyYourMove(before, now).map((g) => g.game_id), ["b"]);
  assert.deepEqual(newlyYourMove(now, now), []);
});
