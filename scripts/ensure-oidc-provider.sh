#!/usr/bin/env bash
# Installs the OpenID provider the sign-in tests run (scripts/oidc-provider,
# the npm package `oidc-provider` at the version its lock file pins) when its
# node_modules is missing. Needs node and npm (Debian's `nodejs` and `npm`).
set -euo pipefail
dir="$(cd "$(dirname "$0")/oidc-provider" && pwd)"
if [ ! -d "$dir/node_modules/oidc-provider" ]; then
  if ! command -v npm >/dev/null; then
    echo "npm is missing: apt-get install -y nodejs npm" >&2
    exit 1
  fi
  (cd "$dir" && npm ci --no-audit --no-fund)
fi
