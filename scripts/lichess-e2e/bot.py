"""A scripted bot for the web end-to-end test (web/e2e/lichess-bot.test.js), driven by berserk.

It seeks in the lobby through the API (so a person on the web page can take the seek), plays
the given moves (UCI) whenever it is its turn, and prints one JSON line per step to stdout:
{"seeking": true}, {"game": id, "color": ...}, {"played": uci}, then {"end": status, "winner": ...}.

Usage: python bot.py BASE_URL TOKEN MINUTES INCREMENT COLOR MOVE...
"""

import json
import sys
import threading

import berserk

base, token, minutes, increment, color, *moves = sys.argv[1:]
client = berserk.Client(berserk.TokenSession(token), base_url=base)


def say(**fields):
    print(json.dumps(fields), flush=True)


events = client.bots.stream_incoming_events()
# The seek lives while its request is open: keep it open on a thread until the game starts.
threading.Thread(
    target=lambda: client.board.seek(int(minutes), int(increment), color=color), daemon=True
).start()
say(seeking=True)
for event in events:
    if event.get("type") == "gameStart":
        game = event["game"]
        break
game_id = game["gameId"]
say(game=game_id, color=game["color"])
parity = 0 if game["color"] == "white" else 1
for line in client.bots.stream_game_state(game_id):
    if line["type"] not in ("gameFull", "gameState"):
        continue
    state = line["state"] if line["type"] == "gameFull" else line
    played = state["moves"].split()
    if state["status"] != "started":
        say(end=state["status"], winner=state.get("winner"), moves=played)
        break
    if len(played) % 2 == parity and moves:
        uci = moves.pop(0)
        client.bots.make_move(game_id, uci)
        say(played=uci)
