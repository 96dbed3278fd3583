#!/usr/bin/env python3
"""Strength matches for chess-engine, played over UCI with python-chess.

Not part of CI. Needs `pip install chess` and, for the Stockfish match,
Debian's `stockfish` package (/usr/games/stockfish).

    # level 2 against level 1
    python3 crates/chess-engine/scripts/match.py levels --games 40
    # level 2 against Stockfish limited to an Elo (or --sf-skill N)
    python3 crates/chess-engine/scripts/match.py stockfish --games 40 --sf-elo 1500

Games start from a fixed set of openings, each played with both colours,
under a Fischer clock (default 5 s + 0.1 s per move). The score is given
from the point of view of chess-engine level 2, with a 95% Wilson score
interval and the matching Elo difference.
"""

import argparse
import math
import os
import sys
import time

import chess
import chess.engine

# Short, well-known opening lines, so the games differ from one another.
OPENINGS = [
    "e2e4 e7e5 g1f3 b8c6",
    "e2e4 c7c5 g1f3 d7d6",
    "d2d4 d7d5 c2c4 e7e6",
    "d2d4 g8f6 c2c4 g7g6",
    "e2e4 e7e6 d2d4 d7d5",
    "c2c4 e7e5 b1c3 g8f6",
    "e2e4 c7c6 d2d4 d7d5",
    "g1f3 d7d5 g2g3 g8f6",
    "d2d4 g8f6 c2c4 e7e6",
    "e2e4 e7e5 f1c4 g8f6",
]

MAX_PLIES = 300


def default_engine_path():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    return os.path.join(target, "release", "chess-engine")


class Player:
    """One side of the match: a UCI engine process with its options."""

    def __init__(self, name, command, options, env=None):
        self.name = name
        self.command = command
        self.options = options
        self.env = env
        self.engine = None

    def start(self):
        kwargs = {}
        if self.env is not None:
            kwargs["env"] = self.env
        self.engine = chess.engine.SimpleEngine.popen_uci(self.command, **kwargs)
        if self.options:
            self.engine.configure(self.options)

    def stop(self):
        if self.engine is not None:
            self.engine.quit()
            self.engine = None


def play_game(white, black, opening, base, inc):
    """Plays one game; returns (result string, plies, reason)."""
    board = chess.Board()
    for uci in opening.split():
        board.push_uci(uci)
    clocks = {chess.WHITE: base, chess.BLACK: base}
    players = {chess.WHITE: white, chess.BLACK: black}
    while not board.is_game_over(claim_draw=True) and board.ply() < MAX_PLIES:
        mover = board.turn
        limit = chess.engine.Limit(
            white_clock=clocks[chess.WHITE],
            black_clock=clocks[chess.BLACK],
            white_inc=inc,
            black_inc=inc,
        )
        started = time.monotonic()
        result = players[mover].engine.play(board, limit, game=opening)
        spent = time.monotonic() - started
        clocks[mover] -= spent
        if clocks[mover] < 0:
            return ("0-1" if mover == chess.WHITE else "1-0"), board.ply(), "time"
        clocks[mover] += inc
        if result.move is None or result.move not in board.legal_moves:
            return ("0-1" if mover == chess.WHITE else "1-0"), board.ply(), f"illegal {result.move}"
        board.push(result.move)
    if board.ply() >= MAX_PLIES and not board.is_game_over(claim_draw=True):
        return "1/2-1/2", board.ply(), "move limit"
    outcome = board.outcome(claim_draw=True)
    return outcome.result(), board.ply(), outcome.termination.name.lower()


def wilson_interval(mean, n, z=1.96):
    """95% Wilson score interval for a proportion: unlike mean ± 1.96 sd it
    stays inside 0..1 and is not zero-width when every game has one result
    (draws count as half a win, a slight approximation)."""
    denominator = 1 + z * z / n
    centre = (mean + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def format_elo(score):
    if score >= 1.0:
        return "+inf"
    if score <= 0.0:
        return "-inf"
    return f"{-400 * math.log10(1 / score - 1):+.0f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("opponent", choices=["levels", "stockfish", "other"],
                        help="level 1, Stockfish, or level 2 of another chess-engine build (--other)")
    parser.add_argument("--other", help="path of the other chess-engine build")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--base", type=float, default=5.0, help="seconds on each clock")
    parser.add_argument("--inc", type=float, default=0.1, help="increment in seconds")
    parser.add_argument("--engine", default=default_engine_path())
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--sf-skill", type=int, default=None, help="Stockfish 'Skill Level' 0-20")
    parser.add_argument("--sf-overhead", type=int, default=300, help="Stockfish 'Move Overhead' in ms")
    parser.add_argument("--sf-elo", type=int, default=None, help="Stockfish UCI_Elo (1320 or more)")
    args = parser.parse_args()

    hero = Player("chess-engine level 2", [args.engine], {"Level": 2})
    if args.opponent == "levels":
        env = dict(os.environ)
        opponent = Player("chess-engine level 1", [args.engine], {"Level": 1}, env)
    elif args.opponent == "other":
        opponent = Player(f"{args.other} level 2", [args.other], {"Level": 2})
    else:
        # Stockfish plans its time to the millisecond; the pipe and a busy
        # machine cost more than its default 10 ms overhead, and without a
        # margin it loses games on time that it would not lose at a board.
        options = {"Threads": 1, "Hash": 16, "Move Overhead": args.sf_overhead}
        label = "Stockfish"
        if args.sf_elo is not None:
            options.update({"UCI_LimitStrength": True, "UCI_Elo": args.sf_elo})
            label += f" UCI_Elo {args.sf_elo}"
        if args.sf_skill is not None:
            options["Skill Level"] = args.sf_skill
            label += f" skill {args.sf_skill}"
        opponent = Player(label, [args.stockfish], options)

    print(f"# {hero.name} vs {opponent.name}, {args.games} games, "
          f"{args.base:g}+{args.inc:g} s", flush=True)
    wins = draws = losses = 0
    hero_flagged = opponent_flagged = 0
    scores = []
    for game in range(args.games):
        opening = OPENINGS[(game // 2) % len(OPENINGS)]
        hero_white = game % 2 == 0
        # Each game gets its own seed so level 1 does not repeat itself.
        if opponent.env is not None:
            opponent.env["CHESS_ENGINE_SEED"] = str(1000 + game)
        hero.start()
        opponent.start()
        try:
            white, black = (hero, opponent) if hero_white else (opponent, hero)
            result, plies, reason = play_game(white, black, opening, args.base, args.inc)
        finally:
            hero.stop()
            opponent.stop()
        if result == "1/2-1/2":
            score = 0.5
            draws += 1
        elif (result == "1-0") == hero_white:
            score = 1.0
            wins += 1
        else:
            score = 0.0
            losses += 1
        scores.append(score)
        if reason == "time":
            if score == 1.0:
                opponent_flagged += 1
            else:
                hero_flagged += 1
        colour = "white" if hero_white else "black"
        print(f"game {game + 1:3}: level 2 {colour:5} {result:7} {plies:3} plies "
              f"({reason})  running +{wins} ={draws} -{losses}", flush=True)

    n = len(scores)
    mean = sum(scores) / n
    low, high = wilson_interval(mean, n)
    print(f"# result: +{wins} ={draws} -{losses} of {n}: level 2 scores "
          f"{100 * mean:.1f}% (95% interval {100 * low:.1f}% to {100 * high:.1f}%)")
    print(f"# lost on time: level 2 {hero_flagged}, opponent {opponent_flagged}")
    print(f"# Elo difference: {format_elo(mean)} "
          f"(95% interval {format_elo(low)} to {format_elo(high)})")

if __name__ == "__main__":
    sys.exit(main())
