"""Drives a running chess server with the real berserk client (docs/lichess-api.md).

1. A bot account (Bot API) and a board account (Board API) play a game to mate through berserk:
   the result on both game streams and on the event streams, the PGN, and no reward (a game with
   a bot pays nothing).
2. Two board accounts play a game that ends in resignation: the winner is paid $1.

Usage: python e2e.py http://127.0.0.1:PORT
"""

import queue
import sys
import threading
import uuid

import berserk
import requests

BASE = sys.argv[1].rstrip("/")
WAIT = 15  # seconds for any one expected line


def account(name, scopes):
    """Signs `name` up on the web API and makes a token: (web session, berserk client)."""
    web = requests.Session()
    web.get(f"{BASE}/api/me").raise_for_status()
    reply = web.post(f"{BASE}/api/account/sign-up", json={"username": name, "password": "correct horse"})
    assert reply.status_code == 201, reply.text
    reply = web.post(f"{BASE}/api/account/tokens", json={"description": "berserk e2e", "scopes": scopes})
    assert reply.status_code == 201, reply.text
    token = reply.json()["token"]
    return web, berserk.Client(berserk.TokenSession(token), base_url=BASE)


class Lines:
    """A berserk stream read on its own thread, so the test can wait for a line with a timeout."""

    def __init__(self, stream):
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        try:
            for line in stream:
                self.lines.put(line)
        except Exception as error:  # the test fails on the missing line, with this in view
            self.lines.put({"type": "stream-error", "error": repr(error)})
        self.lines.put({"type": "stream-ended"})

    def next_of(self, kind):
        while True:
            line = self.lines.get(timeout=WAIT)
            if line.get("type") == kind:
                return line
            assert line.get("type") not in ("stream-error", "stream-ended") or kind == line["type"], line


def state_of(line):
    return line["state"] if line["type"] == "gameFull" else line


def wait_for_moves(stream, moves):
    """The game stream's next state whose moves are `moves`."""
    while True:
        line = stream.lines.get(timeout=WAIT)
        assert line.get("type") in ("gameFull", "gameState"), line
        state = state_of(line)
        if state["moves"] == " ".join(moves):
            return state


def start_game(challenger, challenger_events, dest_name, dest, dest_events, accept, **options):
    created = challenger.challenges.create(dest_name, rated=False, **options)
    challenge = created.get("challenge", created)
    incoming = dest_events.next_of("challenge")
    assert incoming["challenge"]["id"] == challenge["id"], incoming
    accept(challenge["id"])
    game_id = challenger_events.next_of("gameStart")["game"]["gameId"]
    assert dest_events.next_of("gameStart")["game"]["gameId"] == game_id
    return game_id


def rewards(web):
    reply = web.get(f"{BASE}/api/account/rewards")
    reply.raise_for_status()
    return reply.json()


def bot_against_board_to_mate():
    suffix = uuid.uuid4().hex[:6]
    alice_web, alice = account(f"alice{suffix}", ["board:play", "challenge:read", "challenge:write"])
    engine_name = f"engine{suffix}"
    engine_web, engine = account(engine_name, ["bot:play"])
    engine.account.upgrade_to_bot()
    assert engine.account.get()["title"] == "BOT"

    alice_events = Lines(alice.board.stream_incoming_events())
    engine_events = Lines(engine.bots.stream_incoming_events())
    game_id = start_game(
        alice, alice_events, engine_name, engine, engine_events, engine.bots.accept_challenge,
        clock_limit=300, clock_increment=2, color="white",
    )
    alice_game = Lines(alice.board.stream_game_state(game_id))
    engine_game = Lines(engine.bots.stream_game_state(game_id))
    full = alice_game.next_of("gameFull")
    assert full["white"]["name"] == f"alice{suffix}" and full["black"]["title"] == "BOT", full
    assert full["clock"] == {"initial": 300000, "increment": 2000}, full
    engine_game.next_of("gameFull")

    # An illegal move is lichess's 400, which berserk raises.
    try:
        alice.board.make_move(game_id, "e2e5")
        raise AssertionError("an illegal move was accepted")
    except berserk.exceptions.ResponseError as error:
        assert error.status_code == 400, error

    played = []
    for uci, play in [
        ("f2f3", alice.board.make_move),
        ("e7e5", engine.bots.make_move),
        ("g2g4", alice.board.make_move),
        ("d8h4", engine.bots.make_move),
    ]:
        play(game_id, uci)
        played.append(uci)
        for stream in (alice_game, engine_game):
            state = wait_for_moves(stream, played)
    assert state["status"] == "mate" and state["winner"] == "black", state

    for events in (alice_events, engine_events):
        finish = events.next_of("gameFinish")["game"]
        assert finish["gameId"] == game_id and finish["status"]["name"] == "mate", finish

    pgn = requests.get(f"{BASE}/api/games/{game_id}/pgn").text
    assert '[Result "0-1"]' in pgn and "Qh4#" in pgn, pgn
    # The player's export (NDJSON, lichess's GET /api/games/user/{username}) as berserk reads it.
    exported = list(alice.games.export_by_player(f"alice{suffix}"))
    assert [game["id"] for game in exported] == [game_id], exported
    assert exported[0]["status"] == "mate" and exported[0]["winner"] == "black", exported
    assert exported[0]["moves"] == "f3 e5 g4 Qh4#", exported
    assert rewards(engine_web)["entries"] == [], "a bot earns nothing"
    assert rewards(alice_web)["entries"] == [], "nor does losing to one"
    print(f"ok: a bot mated a board account through berserk (game {game_id}); no reward")


def two_board_accounts_and_the_reward():
    suffix = uuid.uuid4().hex[:6]
    scopes = ["board:play", "challenge:read", "challenge:write"]
    alice_web, alice = account(f"alice{suffix}", scopes)
    bob_name = f"bob{suffix}"
    _bob_web, bob = account(bob_name, scopes)
    alice_events = Lines(alice.board.stream_incoming_events())
    bob_events = Lines(bob.board.stream_incoming_events())
    game_id = start_game(
        alice, alice_events, bob_name, bob, bob_events, bob.challenges.accept,
        clock_limit=180, clock_increment=0, color="black",
    )
    bob_game = Lines(bob.board.stream_game_state(game_id))
    bob_game.next_of("gameFull")
    bob.board.make_move(game_id, "e2e4")
    alice.board.make_move(game_id, "e7e5")
    wait_for_moves(bob_game, ["e2e4", "e7e5"])
    bob.board.resign_game(game_id)
    state = bob_game.next_of("gameState")
    assert state["status"] == "resign" and state["winner"] == "black", state
    finish = alice_events.next_of("gameFinish")["game"]
    assert finish["status"]["name"] == "resign" and finish["winner"] == "black", finish
    paid = rewards(alice_web)
    assert paid["total_cents"] == 100, paid
    print(f"ok: two board accounts through berserk (game {game_id}); the winner was paid $1")


if __name__ == "__main__":
    bot_against_board_to_mate()
    two_board_accounts_and_the_reward()
    print("2 passed, 0 failed")
