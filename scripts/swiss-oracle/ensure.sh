#!/usr/bin/env bash
# Makes sure a Python venv with py4swiss 0.3.1 (the FIDE Dutch system, 2017
# rules, results identical to bbpPairings) exists, and prints its python.
# The differential test (crates/chess-tournament/tests/swiss_differential.rs)
# runs this and uses py4swiss only as a black box through its command line.
set -euo pipefail
VERSION="0.3.1"
BASE="${SWISS_ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chess-swiss-oracle}"
VENV="$BASE/py4swiss-$VERSION"
PY="$VENV/bin/python"
if [ ! -x "$PY" ] || ! "$PY" -c 'import py4swiss' >/dev/null 2>&1; then
    mkdir -p "$BASE"
    python3 -m venv "$VENV" >&2
    "$PY" -m pip install --quiet --disable-pip-version-check "py4swiss==$VERSION" >&2
fi
echo "$PY"
