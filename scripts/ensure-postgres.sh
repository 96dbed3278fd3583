#!/usr/bin/env bash
# Makes sure the PostgreSQL the tests use (127.0.0.1:5432, user postgres, trust auth) is up.
# The machines this project runs on have it installed; it may just be stopped.
set -euo pipefail

if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  exit 0
fi

echo "PostgreSQL is not answering on 127.0.0.1:5432; starting it"
version=$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)
if [ -z "$version" ]; then
  echo "error: no PostgreSQL cluster under /etc/postgresql; install postgresql or set CHESS_SKIP_POSTGRES_TESTS=1" >&2
  exit 1
fi
pg_ctlcluster --skip-systemctl-redirect "$version" main start

for _ in $(seq 1 30); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then
    exit 0
  fi
  sleep 1
done
echo "error: PostgreSQL did not come up within 30 s" >&2
exit 1
