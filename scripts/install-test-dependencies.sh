#!/usr/bin/env bash
# Installs what the test suites need beyond npm packages, from Debian's repositories: Chromium
# for the headless browser tests (playwright-core drives /usr/bin/chromium; no browser is ever
# downloaded by npm), redis-server for the Redis state-store tests and benchmark (they start
# and stop their own server on a unix socket; the package's service is not used), redis-sentinel
# for the Sentinel tests of the Redis store (they start three sentinels on loopback ports; the
# package's service is not used) and nginx for
# the rolling-restart test of the shipped deploy/nginx.conf (the test starts its own nginx on
# loopback ports with a temporary prefix; the package's service is not used) and prometheus for
# the telemetry test that scrapes /metrics (test/telemetry/prometheus.test.ts starts its own on a
# loopback port with a temporary configuration and data directory), postgresql for the PostgreSQL
# directory store's tests and benchmark (test/helpers/postgres-server.ts runs initdb and postgres
# from /usr/lib/postgresql/<version>/bin in a temporary directory on a loopback port, as the
# postgres user the package creates when run as root; the package's cluster and service are not
# used), and curl, jq and openssl for
# the task guides' shell commands, which the generator's end-to-end test runs as a reader would
# (packages/create-project-template/test/guide-commands.mjs; openssl makes its loopback TLS
# certificate). One list; only the packages not installed yet are fetched.
set -euo pipefail
PACKAGES=(chromium redis-server redis-sentinel nginx prometheus postgresql curl jq openssl)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo missing)"
echo "redis-server: $(/usr/bin/redis-server --version 2>/dev/null || echo missing)"
echo "redis-sentinel: $(/usr/bin/redis-sentinel --version 2>/dev/null || echo missing)"
echo "nginx: $( (/usr/sbin/nginx -v 2>&1) || echo missing)"
echo "prometheus: $( (/usr/bin/prometheus --version 2>&1 | head -n 1) || echo missing)"
postgres_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
echo "postgresql: $( ("$postgres_bin/postgres" --version 2>/dev/null) || echo missing)"
echo "curl: $( (curl --version 2>/dev/null | head -n 1) || echo missing)"
echo "jq: $(jq --version 2>/dev/null || echo missing)"
echo "openssl: $(openssl version 2>/dev/null || echo missing)"
