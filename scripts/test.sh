#!/usr/bin/env bash
# The project's one test command (the README shows it and .ci/run calls it).
#
# Formatting, lints, every Rust test (the server's on both SQLite and PostgreSQL), and the web
# client's unit and browser tests. It installs and starts what the tests need, so it passes on a
# fresh machine: PostgreSQL is started when down, npm packages and Debian's chromium are
# installed by web/run-tests.sh when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "PostgreSQL"
if [ "${CHESS_SKIP_POSTGRES_TESTS:-0}" != 1 ]; then
  scripts/ensure-postgres.sh
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test (all crates; the server's tests on SQLite and PostgreSQL)"
cargo test --workspace

step "web client: unit and browser tests"
web/run-tests.sh
