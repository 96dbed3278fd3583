#!/usr/bin/env bash
# The web client's tests: unit tests (Node's runner) and end-to-end tests in
# Debian's chromium against the real server. Installs what is missing (npm
# packages, chromium), builds the server, and exits non-zero on any failure.
#
#   web/run-tests.sh            # unit + browser tests
#   web/run-tests.sh --unit     # unit tests only
#
# Environment: CARGO_TARGET_DIR (where the server is built), CHESS_SERVER_BIN
# (use this binary instead of building), CHROMIUM_PATH (default /usr/bin/chromium),
# CHESS_WASM_DIR (the WebAssembly rules and engine the unit tests load; default
# <target>/wasm/pkg, which building the server makes), CHESS_ENGINE_BIN (the native engine
# the WebAssembly one is compared with; default <target>/release/chess-engine, built when
# missing or older than its sources).
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n==> web: %s\n' "$*"; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  step "node and npm (Debian packages)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

target_dir=$(cd .. && cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
export CHESS_WASM_DIR="${CHESS_WASM_DIR:-$target_dir/wasm/pkg}"
if [ ! -f "$CHESS_WASM_DIR/chess_wasm_bg.wasm" ]; then
  step "the WebAssembly rules and engine (chess-server's build script builds them)"
  (cd .. && cargo build -p chess-server)
fi

# The differential test compares the WebAssembly engine with the native one.
export CHESS_ENGINE_BIN="${CHESS_ENGINE_BIN:-$target_dir/release/chess-engine}"
if [ ! -x "$CHESS_ENGINE_BIN" ] || [ -n "$(find ../crates/chess-engine ../crates/chess-rules -newer "$CHESS_ENGINE_BIN" -name '*.rs' -print -quit)" ]; then
  step "the native engine, for the differential test (cargo build --release -p chess-engine)"
  (cd .. && cargo build --release -p chess-engine --bin chess-engine)
fi

step "unit tests"
node --test test/

if [ "${1:-}" = "--unit" ]; then exit 0; fi

step "npm packages"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  npm ci --no-audit --no-fund
fi

if [ "${CHESS_SKIP_OIDC_TESTS:-0}" != 1 ]; then
  step "OpenID provider for the platform sign-in test"
  ../scripts/ensure-oidc-provider.sh
fi

step "chromium"
chromium_path="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium_path" ]; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if [ -z "${CHESS_SERVER_BIN:-}" ]; then
  step "cargo build -p chess-server"
  (cd .. && cargo build -p chess-server)
fi

step "browser tests"
rm -rf screenshots
# One file at a time (each starts its own server); a hung test fails instead of blocking CI.
node --test --test-concurrency=1 --test-timeout=180000 e2e/
step "screenshots are in web/screenshots/"
