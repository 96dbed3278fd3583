#!/usr/bin/env bash
# One row of docs/performance.md: starts the release server on a fresh
# database and a free port, runs the load tool against it as its own process
# (with --server-pid, so the server's CPU and memory are reported), then stops
# the server and removes the database. After the load it prints what each
# node wrote to storage and what its writer committed (from its /metrics).
#
#   scripts/measure.sh sqlite   --games 100 --duration-s 30
#   scripts/measure.sh postgres --games 1000 --think-ms 1000-3000 --duration-s 60
#   NODES=2 scripts/measure.sh postgres --games 100 --duration-s 20   # two nodes, one database
#   NODES=2 LOADS=2 scripts/measure.sh postgres --games 5000 ...       # 2 x 5,000 games
#
# With NODES=n (Postgres only) it starts n nodes on the one database; the load
# tool spreads each game's players over them, so every move crosses nodes.
# With LOADS=k it runs k load processes side by side with the same flags
# (`--games` is then per process), for more sockets than one process may
# open; each prints its own report, and the servers' memory per live game
# counts all k processes' games (`--load-processes`).
#
# With PROFILE="COMMAND..." (one node) the server runs under that profiler:
#   PROFILE="perf record -e cpu-clock -g -o /tmp/perf.data" scripts/measure.sh ...
#   PROFILE="heaptrack -o /tmp/heap" scripts/measure.sh ...   # heaptrack_print /tmp/heap.*
#
# Build first: cargo build --release -p chess-server -p chess-tools
# TEST_POSTGRES_URL is the Postgres admin URL (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail

backend=${1:?usage: scripts/measure.sh sqlite|postgres LOAD_FLAGS...}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}/release
server_bin=$target/chess-server
load_bin=$target/load
for bin in "$server_bin" "$load_bin"; do
    [[ -x $bin ]] || { echo "measure: $bin is missing: build it first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/chess-measure.XXXXXX)
admin_url=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
database=""
case $backend in
    sqlite) database_url="sqlite://$work/chess.db" ;;
    postgres)
        database="chess_measure_$(date +%s)_$$"
        psql -q "$admin_url" -c "create database \"$database\""
        database_url="${admin_url%/*}/$database"
        ;;
    *) echo "measure: the backend is sqlite or postgres, not $backend" >&2; exit 1 ;;
esac

nodes=${NODES:-1}
if [[ $nodes -gt 1 && $backend != postgres ]]; then
    echo "measure: several nodes share a Postgres database, not $backend" >&2
    exit 1
fi

server_pids=()   # the processes started: the servers, or their profilers
measured_pids=() # the servers themselves
cleanup() {
    # Stop the servers themselves (a profiler then writes its data and
    # exits), then wait for what was started.
    for pid in "${measured_pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${server_pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n $database ]]; then
        psql -q "$admin_url" -c "drop database if exists \"$database\" with (force)" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# A free port: bind port 0 and read what the kernel chose.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

load_flags=()
metrics_ports=()
for node in $(seq 1 "$nodes"); do
    port=$(free_port)
    metrics_port=$(free_port)
    metrics_ports+=("$metrics_port")
    mkdir -p "$work/node$node"
    # Every game of the load tool brings two new guests from this one address.
    profiler=()
    if [[ -n ${PROFILE:-} ]]; then
        [[ $nodes -eq 1 ]] || { echo "measure: PROFILE takes one node" >&2; exit 1; }
        read -ra profiler <<<"$PROFILE"
    fi
    NEW_GUESTS_PER_ADDRESS_PER_HOUR=10000000 \
    "${profiler[@]}" "$server_bin" --host 127.0.0.1 --port "$port" --database-url "$database_url" \
        --data-dir "$work/node$node" --node-name "node$node" \
        --metrics-listen "127.0.0.1:$metrics_port" >"$work/node$node.log" 2>&1 &
    server_pid=$!
    server_pids+=("$server_pid")
    if [[ -n ${PROFILE:-} ]]; then
        # Measure the server, not its profiler: the newest chess-server.
        child=""
        for _ in $(seq 1 50); do
            child=$(pgrep -n -x chess-server || true)
            [[ -n $child ]] && break
            sleep 0.1
        done
        server_pid=${child:?measure: the server did not start under the profiler}
    fi
    measured_pids+=("$server_pid")
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$work/node$node.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "measure: $backend node $node: pid $server_pid on port $port"
    load_flags+=(--url "http://127.0.0.1:$port" --server-pid "$server_pid")
done

# Bytes each server process caused to be written to storage (`write_bytes` of
# /proc/PID/io): on SQLite, the WAL and its checkpoints, so what a move costs
# the disk. (On Postgres the database's own processes write, not the node.)
storage_writes() {
    for pid in "${measured_pids[@]}"; do
        awk '/^write_bytes/ { print $2 }' "/proc/$pid/io"
    done | paste -sd' '
}
# The text of the /metrics of the node whose metrics port is $1.
metrics_of() {
    curl -sf "http://127.0.0.1:$1/metrics"
}
# The group commits' totals in the /metrics text on stdin: "transactions moves seconds".
commit_totals() {
    awk '
        /^chess_commit_batch_moves_count/ { count = $2 }
        /^chess_commit_batch_moves_sum/ { moves = $2 }
        /^chess_commit_batch_seconds_sum/ { seconds = $2 }
        END { print count + 0, moves + 0, seconds + 0 }'
}
# "p50 <= A, p99 <= B" of the Prometheus histogram NAME in the text on stdin
# (bucket bounds, so at most).
quantiles() {
    awk -v name="$1" '
        index($0, name "_bucket{") == 1 {
            match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
            n++; bound[n] = le; count[n] = $2 }
        index($0, name "_count ") == 1 { total = $2 }
        END {
            if (total == 0) { print "none"; exit }
            for (q = 1; q <= 2; q++) {
                want = (q == 1 ? 0.5 : 0.99) * total
                for (k = 1; k < n && count[k] < want; k++) {}
                shown[q] = (bound[k] == "+Inf" ? "+Inf" : sprintf("%g ms", bound[k] * 1000))
            }
            printf "p50 <= %s, p99 <= %s", shown[1], shown[2] }'
}
commits_before=()
for metrics_port in "${metrics_ports[@]}"; do
    commits_before+=("$(metrics_of "$metrics_port" | commit_totals)")
done
writes_before=$(storage_writes)
loads=${LOADS:-1}
status=0
if [[ $loads -eq 1 ]]; then
    "$load_bin" "${load_flags[@]}" "$@" || status=$?
else
    load_pids=()
    for load in $(seq 1 "$loads"); do
        "$load_bin" "${load_flags[@]}" --load-processes "$loads" "$@" >"$work/load$load.txt" 2>&1 &
        load_pids+=($!)
    done
    for load in $(seq 1 "$loads"); do
        wait "${load_pids[$((load - 1))]}" || status=1
        echo "measure: load process $load of $loads:"
        cat "$work/load$load.txt"
    done
fi
writes_after=$(storage_writes)
read -ra before <<<"$writes_before"
read -ra after <<<"$writes_after"
for i in "${!measured_pids[@]}"; do
    echo "measure: node $((i + 1)) wrote $(( (after[i] - before[i]) / 1024 )) KiB to storage during the load"
    # What the node's writer did meanwhile: its transactions, the moves in
    # each and the time each took, the commit's sync included.
    read -r count0 moves0 seconds0 <<<"${commits_before[i]}"
    scrape=$(metrics_of "${metrics_ports[i]}")
    read -r count1 moves1 seconds1 <<<"$(commit_totals <<<"$scrape")"
    awk -v node=$((i + 1)) -v c0="$count0" -v c1="$count1" -v m0="$moves0" -v m1="$moves1" \
        -v s0="$seconds0" -v s1="$seconds1" 'BEGIN {
        if (c1 > c0) printf "measure: node %d committed %d transactions, %.1f moves and %.2f ms each\n",
            node, c1 - c0, (m1 - m0) / (c1 - c0), (s1 - s0) * 1000 / (c1 - c0) }'
    # The node's own view (the whole run): an ack's time from the move's
    # arrival on its socket, commit included (what the load tool sees beyond
    # it is spent in the kernel, in the runtime's queue before the socket
    # task reads, and in the load tool itself), and a transaction's.
    echo "measure: node $((i + 1)) acks $(quantiles chess_move_ack_seconds <<<"$scrape")," \
        "transactions $(quantiles chess_commit_batch_seconds <<<"$scrape")"
    # How its batches were written (the whole run): in one go (one call of
    # chess_commit_batch on Postgres, the writer's own connection on SQLite),
    # or statement by statement (a take-back, a rematch, an account's win,
    # on Postgres a game another node moved on).
    awk -v node=$((i + 1)) '
        /^chess_commit_batches_total\{path="one_statement"\}/ { one = $2 }
        /^chess_commit_batches_total\{path="statements"\}/ { statements = $2 }
        END { printf "measure: node %d wrote %d batches in one go, %d statement by statement\n", node, one, statements }' <<<"$scrape"
    if [[ $backend == sqlite ]]; then
        # The log's background checkpoints (the whole run), and how large
        # the log file grew: it starts over once every page is copied, but
        # keeps the size it reached.
        awk -v node=$((i + 1)) -v wal="$(stat -c %s "$work/chess.db-wal" 2>/dev/null || echo 0)" '
            /^chess_wal_checkpoints_total/ { checkpoints = $2 }
            /^chess_wal_pages/ { pages = $2 }
            END { printf "measure: node %d checkpointed its log %d times in the background, %d pages in it at the last; the log file is %.1f MiB\n", node, checkpoints, pages, wal / 1048576 }' <<<"$scrape"
    fi
    if [[ $nodes -gt 1 ]]; then
        # How the node caught up with the others' changes (the whole run).
        awk -v node=$((i + 1)) '
            /^chess_remote_changes_total\{how="followed"\}/ { followed = $2 }
            /^chess_remote_changes_total\{how="reread"\}/ { reread = $2 }
            END { printf "measure: node %d followed %d other nodes\x27 changes from their notices and reread %d\n", node, followed, reread }' <<<"$scrape"
    fi
done
exit $status
