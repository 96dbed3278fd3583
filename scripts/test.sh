#!/usr/bin/env bash
# The project's one test command (the README shows it and .ci/run calls it).
#
# Formatting, lints, every Rust test (the server's on both SQLite and PostgreSQL), the alert rules
# (promtool), the backups and restores of docs/operations.md run as written, the web client's unit
# and browser tests, and the lichess API driven by the berserk client (PyPI). It installs and
# starts what the tests need, so it passes on a fresh machine: PostgreSQL is started when down,
# nginx (for the rolling restarts behind the shipped proxy configuration) installed when missing,
# promtool is taken from Debian's prometheus package by scripts/check-alerts.sh and sqlite3
# installed by scripts/check-operations.sh when missing, npm packages and Debian's chromium are
# installed by web/run-tests.sh, berserk into a venv by scripts/lichess-e2e/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "PostgreSQL"
if [ "${CHESS_SKIP_POSTGRES_TESTS:-0}" != 1 ]; then
  scripts/ensure-postgres.sh
fi

step "nginx (the rolling-restart test runs deploy/nginx/chess.conf)"
if [ "${CHESS_SKIP_NGINX_TESTS:-0}" != 1 ]; then
  scripts/ensure-nginx.sh
fi

step "OpenID provider (the platform sign-in tests run the npm package oidc-provider)"
if [ "${CHESS_SKIP_OIDC_TESTS:-0}" != 1 ]; then
  scripts/ensure-oidc-provider.sh
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "WebAssembly: the browser's rules and engine (chess-wasm) linted for wasm32-unknown-unknown"
# rustup does not add a target for an installed toolchain by itself (chess-server's build
# script, which builds the module, adds it too when missing).
rustup target add wasm32-unknown-unknown
cargo clippy --target wasm32-unknown-unknown -p chess-wasm -- -D warnings

step "cargo test (all crates; the server's tests on SQLite and PostgreSQL)"
cargo test --workspace

step "alert rules: promtool check rules and promtool test rules"
scripts/check-alerts.sh

# `cargo test` has just built the server binary; the steps below use it rather than
# rebuilding it with a different feature set (dev-dependencies unify features in test builds).
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export CHESS_SERVER_BIN="${CHESS_SERVER_BIN:-$target_dir/debug/chess-server}"

step "docs/operations.md: the backups and restores, run as written"
scripts/check-operations.sh

step "web client: unit and browser tests"
web/run-tests.sh

step "lichess API end to end with the real berserk client (venv made when missing)"
scripts/lichess-e2e/run.sh "$CHESS_SERVER_BIN"
