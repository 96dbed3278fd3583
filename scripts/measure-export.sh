#!/usr/bin/env bash
# The memory of a player's export (`GET /api/games/user/{username}`): starts
# the release server on a fresh SQLite file, plays one game between two new
# accounts through the lichess API, copies it N-1 times with SQL (as
# tests/api/archive.rs does), then downloads the player's NDJSON and PGN
# exports ROUNDS times while sampling the server's anonymous resident memory
# (RssAnon, every 5 ms). The export streams page by page, so the peak should
# not follow N.
#
#   cargo build --release -p chess-server --bin chess-server
#   scripts/measure-export.sh 10000
#   ROUNDS=4 scripts/measure-export.sh 100000
#
# Needs curl, jq and the sqlite3 program.
set -euo pipefail
games=${1:?usage: scripts/measure-export.sh GAMES}
rounds=${ROUNDS:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
server_bin=${CARGO_TARGET_DIR:-$root/target}/release/chess-server
[[ -x $server_bin ]] || { echo "measure-export: build $server_bin first" >&2; exit 1; }
for tool in curl jq sqlite3; do
    command -v "$tool" >/dev/null || { echo "measure-export: needs $tool" >&2; exit 1; }
done

work=$(mktemp -d /tmp/chess-export.XXXXXX)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
db=$work/chess.db
"$server_bin" --host 127.0.0.1 --port "$port" --database-url "sqlite://$db" >"$work/server.log" 2>&1 &
pid=$!
sampler=""
cleanup() {
    [[ -n $sampler ]] && kill "$sampler" 2>/dev/null
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done

# A new account and a token of it for the board API.
token() {
    local jar=$work/$1.cookies
    curl -sf -c "$jar" -b "$jar" -H 'content-type: application/json' -H "origin: $base" \
        -d "{\"username\":\"$1\",\"password\":\"export measure password\"}" \
        "$base/api/account/sign-up" >/dev/null
    curl -sf -c "$jar" -b "$jar" -H 'content-type: application/json' -H "origin: $base" \
        -d '{"description":"measure","scopes":["board:play","challenge:write","challenge:read"]}' \
        "$base/api/account/tokens" | jq -r .token
}
alice=$(token alice)
bob=$(token bob)
challenge=$(curl -sf -H "authorization: Bearer $alice" -d color=white "$base/api/challenge/bob" \
    | jq -r '.id // .challenge.id')
curl -sf -X POST -H "authorization: Bearer $bob" "$base/api/challenge/$challenge/accept" >/dev/null
game=$(sqlite3 "$db" "select id from games order by created_at desc limit 1")
for move in "$alice f2f3" "$bob e7e5" "$alice g2g4" "$bob d8h4"; do
    set -- $move
    curl -sf -X POST -H "authorization: Bearer $1" "$base/api/board/game/$game/move/$2" >/dev/null
done
for _ in $(seq 50); do
    [[ $(sqlite3 "$db" "select status from games where id = '$game'") == finished ]] && break
    sleep 0.1
done

sqlite3 "$db" "
insert into games (id, mode, white_id, black_id, computer_level, time_control, status, result,
    state, version, rematch_of, rematch_id, created_at, updated_at, deadline_at, recent_events,
    premove_nodes)
select lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)
        || '-a' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
    g.mode, g.white_id, g.black_id, g.computer_level, g.time_control, 'finished', g.result,
    g.state, g.version, null, null, g.created_at, g.updated_at + n.i, null, '[]', null
from games g cross join (with recursive s(i) as (select 1 union all select i + 1 from s
    where i < $((games - 1))) select i from s) as n
where g.id = '$game';
insert into moves (game_id, ply, uci, san, clock_ms, record, played_at)
select c.id, m.ply, m.uci, m.san, m.clock_ms, m.record, m.played_at
from games c cross join moves m
where m.game_id = '$game' and c.id <> '$game'
    and not exists (select 1 from moves x where x.game_id = c.id);"

anonymous_kib() { awk '/^RssAnon/ { print $2 }' "/proc/$pid/status"; }
echo 0 >"$work/peak"
(
    peak=0
    while kill -0 "$pid" 2>/dev/null; do
        now=$(anonymous_kib)
        if ((now > peak)); then peak=$now; echo "$peak" >"$work/peak"; fi
        sleep 0.005
    done
) &
sampler=$!
echo "measure-export: $games games; server anonymous memory $(anonymous_kib) KiB before the exports"
for round in $(seq "$rounds"); do
    for accept in application/x-ndjson application/x-chess-pgn; do
        started=$(date +%s%N)
        bytes=$(curl -sf -H "accept: $accept" "$base/api/games/user/alice" | wc -c)
        ms=$((($(date +%s%N) - started) / 1000000))
        echo "measure-export: round $round, $accept: $bytes bytes in $ms ms; peak so far $(cat "$work/peak") KiB, now $(anonymous_kib) KiB"
    done
done
