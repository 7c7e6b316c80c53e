#!/usr/bin/env bash
# Lint, format, type check, then pytest with this script's arguments: none is the whole suite (CI's
# command), `-m "not slow"` the quick lane (docs/development.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
export QT_QPA_PLATFORM=offscreen
echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy" && .venv/bin/mypy
echo "== pytest"
set +e
.venv/bin/pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
