#!/usr/bin/env bash
# Run mcpmanager from this checkout (sets it up first). With no config it serves the bundled demo.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
exec "$root/.venv/bin/mcpmanager" "$@"
