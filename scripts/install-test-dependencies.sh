#!/usr/bin/env bash
# Installs what the test suites need beyond npm packages, from Debian's repositories: Chromium
# for the headless browser tests (playwright-core drives /usr/bin/chromium; no browser is ever
# downloaded by npm). One list; only the packages not installed yet are fetched.
set -euo pipefail
PACKAGES=(chromium)
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
