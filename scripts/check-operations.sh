#!/usr/bin/env bash
# Runs the backup and restore commands of docs/operations.md for real, as they stand in the doc.
#
# Each procedure is a fenced block whose info string carries its name, such as
#   ```sh {#backup-sqlite}
# and this script extracts those blocks (each must appear exactly once) and runs them with bash
# -euo pipefail, pointing their path variables (DATA, BACKUP, DATABASE_URL) at temporary folders
# and databases. Around them it starts the real chess-server binary, creates state through the
# HTTP API (a guest, a one-screen game, a computer game with the computer's first move, an
# account), backs up while the server runs and new guests keep arriving, stops the server,
# restores (into an empty folder or database, and over the old one), starts a server on the
# result and checks that the state is there and that what came after the backup is not.
#
#   scripts/check-operations.sh
#
# Environment: CHESS_SERVER_BIN (default: target/debug/chess-server of the cargo target folder,
# built when missing), TEST_POSTGRES_URL (admin URL, default
# postgres://postgres@127.0.0.1:5432/postgres; started with scripts/ensure-postgres.sh when
# down), CHESS_SKIP_POSTGRES_TESTS=1 skips the PostgreSQL half. Installs sqlite3 and
# postgresql-client with apt-get when missing. Exits non-zero, saying which step, when a
# documented command fails or the state is missing; the work folder is then kept.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
doc=$root/docs/operations.md

step() { printf '\n==> operations: %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
fail() {
  printf '\ncheck-operations: FAILED: %s\n' "$*" >&2
  if [ -n "${server_log:-}" ] && [ -f "$server_log" ]; then
    printf -- '--- last lines of %s\n' "$server_log" >&2
    tail -n 20 "$server_log" >&2
  fi
  exit 1
}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

skip_postgres=0
[ "${CHESS_SKIP_POSTGRES_TESTS:-0}" = 1 ] && skip_postgres=1

step "tools"
if ! command -v sqlite3 >/dev/null; then
  note "sqlite3 is missing: installing Debian's sqlite3"
  apt_install sqlite3 || fail "cannot install sqlite3 (apt-get install sqlite3)"
fi
if [ "$skip_postgres" = 0 ] && ! command -v pg_dump >/dev/null; then
  note "pg_dump is missing: installing Debian's postgresql-client"
  apt_install postgresql-client || fail "cannot install postgresql-client"
fi
for tool in curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is needed"
done

target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin=${CHESS_SERVER_BIN:-$target_dir/debug/chess-server}
if [ ! -x "$bin" ]; then
  step "cargo build -p chess-server ($bin is missing)"
  cargo build -p chess-server
fi
[ -x "$bin" ] || fail "no server binary at $bin"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
note "server: $bin"

work=$(mktemp -d /tmp/chess-operations.XXXXXX)
server_pid=""
writer_pid=""
databases=()
admin_url=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
cleanup() {
  local status=$?
  if [ -n "$writer_pid" ]; then kill "$writer_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  for database in "${databases[@]}"; do
    psql -q "$admin_url" -c "drop database if exists \"$database\" with (force)" >/dev/null 2>&1 || true
  done
  if [ "$status" = 0 ]; then
    rm -rf "$work"
  else
    printf 'check-operations: the work folder is kept: %s\n' "$work" >&2
  fi
}
trap cleanup EXIT

# The body of the one block of the doc whose opening fence is ```sh {#NAME}.
extract() {
  awk -v fence="\`\`\`sh {#$1}" '
    $0 == fence { inside = 1; found++; next }
    inside && $0 == "```" { inside = 0; next }
    inside { print }
    END { if (found != 1 || inside) exit 1 }' "$doc"
}

# Runs the documented block NAME in folder DIR with the VAR=value assignments given.
run_block() {
  local name=$1 dir=$2 body
  shift 2
  body=$(extract "$name") || fail "docs/operations.md must hold exactly one block \`\`\`sh {#$name}"
  [ -n "$body" ] || fail "the block {#$name} of docs/operations.md is empty"
  note "running {#$name} in $dir with $*"
  mkdir -p "$dir"
  (cd "$dir" && env -u DATA -u BACKUP -u DATABASE_URL "$@" bash -euo pipefail -c "$body") ||
    fail "the documented block {#$name} failed (exit status $?)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the server in DIR (its working directory, so the default data/ is DIR/data) on a free
# port with only the settings given, and waits until /healthz answers. Sets base and server_pid.
start_server() {
  local dir=$1 port
  shift
  port=$(free_port)
  base=http://127.0.0.1:$port
  server_log=$dir/server.log
  mkdir -p "$dir"
  # env -i: no setting of the calling environment (DATABASE_URL, CHESS_SECRET, ...) leaks in.
  (cd "$dir" && exec env -i PATH="$PATH" HOST=127.0.0.1 PORT="$port" \
    NEW_GUESTS_PER_ADDRESS_PER_HOUR=1000000 RUST_LOG=warn "$@" "$bin") >>"$server_log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    if curl -sf "$base/healthz" >/dev/null 2>&1; then
      note "server $server_pid on $base, in $dir"
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || fail "the server in $dir did not start"
    sleep 0.1
  done
  fail "the server in $dir did not answer /healthz within 30 s"
}

# Stops the server with SIGTERM, as an operator does, and requires a clean exit.
stop_server() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  [ "$status" = 0 ] || fail "the server exited with status $status after SIGTERM"
  server_log=""
}

# HTTP: METHOD PATH JAR [JSON BODY]; prints the body, fails on anything but 2xx.
api() {
  local method=$1 path=$2 jar=$3 body=${4:-}
  local args=(-sS --fail-with-body -X "$method" -b "$jar" -c "$jar")
  if [ -n "$body" ]; then
    # A state-changing request from the site's own page, as a browser sends it.
    args+=(-H "Origin: $base" -H 'content-type: application/json' -d "$body")
  fi
  curl "${args[@]}" "$base$path" || fail "$method $path answered an error"
}
# The HTTP status of GET PATH with the cookies of JAR.
status_of() { curl -s -o /dev/null -w '%{http_code}' -b "$2" "$base$1"; }
# Field NAME of the JSON object on stdin.
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# Creates a guest (cookies in $work/guest.jar), a one-screen game, a computer game in which
# the computer has played White's first move, and an account.
make_state() {
  rm -f "$work/guest.jar" "$work/account.jar"
  guest_id=$(api GET /api/me "$work/guest.jar" | field id)
  local_id=$(api POST /api/games/local "$work/guest.jar" \
    '{"time_control":{"kind":"correspondence"}}' | field game_id)
  computer_id=$(api POST /api/games/computer "$work/guest.jar" \
    '{"level":1,"color":"black","time_control":{"kind":"correspondence"}}' | field game_id)
  first_move=""
  for _ in $(seq 1 200); do
    first_move=$(api GET "/api/games/$computer_id" "$work/guest.jar" |
      python3 -c 'import json,sys; m = json.load(sys.stdin)["moves"]; print(m[0]["uci"] if m else "")')
    [ -n "$first_move" ] && break
    sleep 0.1
  done
  [ -n "$first_move" ] || fail "the computer did not play its first move within 20 s"
  account=ops$RANDOM$RANDOM
  api POST /api/account/sign-up "$work/account.jar" \
    "{\"username\":\"$account\",\"password\":\"correct horse battery\"}" >/dev/null
  note "state: guest $guest_id, local game $local_id, computer game $computer_id ($first_move), account $account"
}

# New guests, one after the other, until stopped: the server writes while a backup runs.
start_writes() {
  : >"$work/writes"
  (while :; do curl -sf -o /dev/null "$base/api/me" && echo >>"$work/writes"; sleep 0.01; done) &
  writer_pid=$!
  for _ in $(seq 1 100); do
    [ -s "$work/writes" ] && return 0
    sleep 0.05
  done
  fail "no new guest was written within 5 s"
}
stop_writes() {
  kill "$writer_pid"
  wait "$writer_pid" 2>/dev/null || true
  writer_pid=""
  note "$(wc -l <"$work/writes") new guests written from just before the backup to just after"
}

# SQLite's own check of the database file in folder DIR (its server stopped).
check_file() {
  [ "$(sqlite3 "$1/data/chess.db" 'pragma integrity_check')" = ok ] ||
    fail "pragma integrity_check does not answer ok on $1/data/chess.db"
}

# The state of make_state is served by the server at $base; the games given, made after the
# backup, are not.
check_state() {
  local jar=$work/check.jar me mine
  cp "$work/guest.jar" "$jar"
  me=$(api GET /api/me "$jar" | field id)
  [ "$me" = "$guest_id" ] ||
    fail "the guest's cookie names another player after the restore ($me, not $guest_id): secret or players lost"
  [ "$(api GET "/api/games/$local_id" "$jar" | field game_id)" = "$local_id" ] ||
    fail "the one-screen game $local_id is missing"
  local moves
  moves=$(api GET "/api/games/$computer_id" "$jar" |
    python3 -c 'import json,sys; print(" ".join(m["uci"] for m in json.load(sys.stdin)["moves"]))')
  [ "${moves%% *}" = "$first_move" ] ||
    fail "the computer game $computer_id lost its first move ($first_move; now: '$moves')"
  mine=$(api GET /api/games/mine "$jar")
  for id in "$local_id" "$computer_id"; do
    grep -q "$id" <<<"$mine" || fail "GET /api/games/mine does not list $id"
  done
  rm -f "$work/signin.jar"
  api POST /api/account/sign-in "$work/signin.jar" \
    "{\"username\":\"$account\",\"password\":\"correct horse battery\"}" >/dev/null
  local after game_after
  for game_after in "$@"; do
    after=$(status_of "/api/games/$game_after" "$jar")
    [ "$after" = 404 ] ||
      fail "GET /api/games/$game_after (made after the backup) answered $after, not 404: the restore did not replace the database"
  done
  note "restored: the guest, both games with their moves, the account; the $# game(s) made after the backup are gone"
}

# A game made after the backup, which a restore must not bring back.
game_after_backup() {
  api POST /api/games/local "$work/guest.jar" '{"time_control":{"kind":"correspondence"}}' | field game_id
}

step "SQLite: a server with the default settings in $work/site"
start_server "$work/site"
make_state

step "SQLite: both documented backups while the server runs and writes"
start_writes
run_block backup-sqlite "$work/site" BACKUP="$work/backup-api"
run_block backup-sqlite-vacuum "$work/site" BACKUP="$work/backup-vacuum"
stop_writes
for backup in backup-api backup-vacuum; do
  [ -s "$work/$backup/chess.db" ] && [ -s "$work/$backup/secret" ] ||
    fail "{#$backup} did not leave chess.db and secret in its folder"
done
game_after=$(game_after_backup)
stop_server

step "SQLite: the documented restore into an empty folder"
run_block restore-sqlite "$work/restored" BACKUP="$work/backup-api"
start_server "$work/restored"
check_state "$game_after"
stop_server
check_file "$work/restored"

step "SQLite: the documented restore over a crashed server's files (stale -wal and -shm)"
# The old server writes once more and dies: its last commit stays in its log, which SQLite
# would apply to whatever database file it finds next to it.
start_server "$work/site"
crashed_after=$(game_after_backup)
{ kill -KILL "$server_pid" && wait "$server_pid"; } 2>/dev/null || true
server_pid=""
[ -s "$work/site/data/chess.db-wal" ] || fail "the killed server left no chess.db-wal: nothing stale to remove"
run_block restore-sqlite "$work/site" BACKUP="$work/backup-vacuum"
start_server "$work/site"
check_state "$game_after" "$crashed_after"
stop_server
check_file "$work/site"

if [ "$skip_postgres" = 1 ]; then
  step "PostgreSQL: skipped (CHESS_SKIP_POSTGRES_TESTS=1)"
  printf '\ncheck-operations: the SQLite backups and restores of docs/operations.md work\n'
  exit 0
fi

step "PostgreSQL: a server on a throwaway database"
scripts/ensure-postgres.sh
live_db=chess_ops_live_$$
restored_db=chess_ops_restored_$$
databases+=("$live_db" "$restored_db")
psql -q -v ON_ERROR_STOP=1 "$admin_url" -c "create database \"$live_db\"" ||
  fail "cannot create the database $live_db at $admin_url"
live_url=${admin_url%/*}/$live_db
restored_url=${admin_url%/*}/$restored_db
secret=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
start_server "$work/pg-node" DATABASE_URL="$live_url" CHESS_SECRET="$secret" NODE_NAME=ops-check
make_state

step "PostgreSQL: the documented backup while the server runs and writes"
start_writes
run_block backup-postgres "$work/pg-node" DATABASE_URL="$live_url" BACKUP="$work/pg-backup"
stop_writes
[ -s "$work/pg-backup/chess.pgdump" ] || fail "{#backup-postgres} left no chess.pgdump"
game_after=$(game_after_backup)
stop_server

step "PostgreSQL: the documented restore into an empty database"
psql -q -v ON_ERROR_STOP=1 "$admin_url" -c "create database \"$restored_db\"" ||
  fail "cannot create the database $restored_db"
run_block restore-postgres "$work" DATABASE_URL="$restored_url" BACKUP="$work/pg-backup"
start_server "$work/pg-restored" DATABASE_URL="$restored_url" CHESS_SECRET="$secret" NODE_NAME=ops-check
check_state "$game_after"
stop_server

step "PostgreSQL: the documented restore over the database it was taken from"
run_block restore-postgres "$work" DATABASE_URL="$live_url" BACKUP="$work/pg-backup"
start_server "$work/pg-node" DATABASE_URL="$live_url" CHESS_SECRET="$secret" NODE_NAME=ops-check
check_state "$game_after"
stop_server

printf '\ncheck-operations: the backups and restores of docs/operations.md work on SQLite and PostgreSQL\n'
