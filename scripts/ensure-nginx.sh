#!/usr/bin/env bash
# Installs nginx (Debian's nginx-light) when it is missing: the rolling-restart test runs the
# shipped deploy/nginx/chess.conf in front of two nodes. The package's own service is not used.
set -euo pipefail
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "error: nginx is missing; install it (sudo apt-get install nginx-light) or set CHESS_SKIP_NGINX_TESTS=1" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d 101: do not start the package's service on port 80.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
apt-get install -y -qq nginx-light >/dev/null
