#!/usr/bin/env bash
# Checks the monitoring files shipped in deploy/: the Prometheus alert rules with promtool
# (`promtool check rules`, then the rules' unit tests with `promtool test rules`) and the
# Grafana dashboard's JSON. (That every chess_* metric they name exists is checked by
# crates/chess-server/tests/operations.rs against a running server's /metrics.)
#
#   scripts/check-alerts.sh
#
# promtool comes from Debian's `prometheus` package. When it is not on PATH, the package is
# fetched with `apt-get download` and only promtool is taken out of it (into the cargo target
# folder, tools/promtool): installing the package would also install, and on some machines
# start, a Prometheus server. Fails, saying so, when the package cannot be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> alerts: %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
  target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  promtool=$target_dir/tools/promtool
  if [ ! -x "$promtool" ]; then
    step "promtool from Debian's prometheus package"
    download=$(mktemp -d)
    trap 'rm -rf "$download"' EXIT
    if ! as_root apt-get update -qq ||
      ! (cd "$download" && apt-get download prometheus >/dev/null) ||
      ! dpkg-deb -x "$download"/prometheus_*.deb "$download/root"; then
      echo "error: cannot fetch Debian's prometheus package for promtool (apt-get download prometheus failed);" \
        "install it (apt-get install prometheus) or put promtool on PATH" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$promtool")"
    cp "$download/root/usr/bin/promtool" "$promtool"
  fi
fi
"$promtool" --version 2>&1 | head -n 1

step "promtool check rules deploy/prometheus/alerts.yml"
"$promtool" check rules deploy/prometheus/alerts.yml

step "promtool test rules deploy/prometheus/alerts.test.yml"
"$promtool" test rules deploy/prometheus/alerts.test.yml

step "deploy/grafana/chess-server.json is JSON"
python3 -m json.tool deploy/grafana/chess-server.json >/dev/null
echo "ok"
