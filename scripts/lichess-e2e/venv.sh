#!/usr/bin/env bash
# Makes the venv with the pinned berserk (requirements.txt) when it is missing and prints its
# python. The venv is $LICHESS_E2E_VENV, default <cargo target dir>/lichess-e2e-venv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
if [ -z "${LICHESS_E2E_VENV:-}" ]; then
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  LICHESS_E2E_VENV="$target_dir/lichess-e2e-venv"
fi
if ! "$LICHESS_E2E_VENV/bin/python" -c 'import berserk' 2>/dev/null; then
  python3 -m venv "$LICHESS_E2E_VENV" >&2
  "$LICHESS_E2E_VENV/bin/pip" install --quiet -r "$here/requirements.txt" >&2
fi
echo "$LICHESS_E2E_VENV/bin/python"
