#!/usr/bin/env bash
# Installs what the test suites need beyond npm packages, from Debian's packages: Chromium for the
# headless-browser tests (playwright-core drives it; no browser is ever downloaded by npm) and
# redis-server for the Redis state-store tests (the tests start and stop their own server on a
# unix socket; nothing is left running).
set -euo pipefail
PACKAGES=(chromium redis-server)
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/redis-server ] || missing+=(redis-server)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "test dependencies (${PACKAGES[*]}):"
/usr/bin/chromium --version 2>/dev/null || echo "chromium present"
/usr/bin/redis-server --version
