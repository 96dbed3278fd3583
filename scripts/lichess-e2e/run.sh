#!/usr/bin/env bash
# End to end with the real `berserk` client (PyPI): a bot account and a board account play a
# whole game to mate through berserk against a running server, then two board accounts play one
# to resignation; the result, the PGN and the rewards are checked; then the two run an arena
# through berserk's tournament calls (docs/lichess-api.md).
#
# Usage: scripts/lichess-e2e/run.sh [path/to/chess-server]
# Without a binary, the debug build of the workspace is used (built if missing). The venv with
# berserk is made by venv.sh when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
server="${1:-${CHESS_SERVER_BIN:-$target_dir/debug/chess-server}}"
if [ ! -x "$server" ]; then
  cargo build -p chess-server --bin chess-server
fi

python="$("$here/venv.sh")"

data="$(mktemp -d)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
CHESS_DEVELOPMENT=true PORT="$port" CHESS_DATA_DIR="$data" DATABASE_URL="sqlite://$data/chess.db" \
  "$server" >"$data/server.log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done

if ! "$python" "$here/e2e.py" "http://127.0.0.1:$port"; then
  echo "--- server log" >&2
  tail -n 50 "$data/server.log" >&2
  exit 1
fi
