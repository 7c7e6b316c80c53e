#!/usr/bin/env bash
# Install real, published MCP servers (npm and PyPI) into .cache/published/ for tests, benchmarks and
# manual checks, then write .cache/published/config.json (an mcpmanager config that runs them all,
# plus two deliberately broken servers). Idempotent: what is installed at the pinned version is kept.
#
#   scripts/install-published-servers.sh                 everything (npm + PyPI), then the config
#   scripts/install-published-servers.sh --python-only  only the PyPI servers (fast), then the config
#   scripts/install-published-servers.sh --check         exit 0 when everything is installed
#   scripts/install-published-servers.sh --python-only --check
#
# Needs node/npm for the npm servers and python3 (3.10+, or $PYTHON) for the PyPI ones.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/published"
python="${PYTHON:-python3}"

# Pinned versions: the newest that were checked to start and list their tools offline.
npm_packages=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-github@2025.4.8"
  "@wonderwhy-er/desktop-commander@0.2.52"
  "@modelcontextprotocol/inspector@2.12.0"
  # A real client: its native binary comes in the platform package (an optional dependency), so
  # --ignore-scripts below only skips copying it over the wrapper's placeholder (about 400 MB).
  "@anthropic-ai/claude-code@2.1.332"
  "@modelcontextprotocol/server-system-monitor@2.0.3" # an MCP App (tests/e2e/test_apps.py), not in the config
)
# A spec may carry extra requirements after a space: mcp-server-sqlite was built for the handshake
# era and crashes under mcp 2.x (it is not in the generated config; tests of old servers use it).
py_packages=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
  "mcp-server-fetch==2026.10.24"
  "mcp-server-sqlite==2025.4.25 mcp<2"
)

python_only=0
check=0
for arg in "$@"; do
  case "$arg" in
    --python-only) python_only=1 ;;
    --check) check=1 ;;
    -h | --help)
      sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-published-servers: unknown option: $arg" >&2
      exit 2
      ;;
  esac
done

# npm: one folder, one package.json; a package is installed when its package.json has the pinned version.
npm_installed() { # name@version
  local spec="$1" name version manifest
  name="${spec%@*}"
  version="${spec##*@}"
  manifest="$dest/node_modules/$name/package.json"
  [ -f "$manifest" ] && grep -q "\"version\": *\"$version\"" "$manifest"
}

# PyPI: one venv per package; a stamp file records the spec it was installed with.
py_venv() { echo "$dest/venvs/${1%%==*}"; }
py_name() { local spec="${1%% *}"; echo "${spec%%==*}"; }
py_installed() { # name==version
  local venv
  venv="$(py_venv "$1")"
  [ -x "$venv/bin/$(py_name "$1")" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$1" ]
}

all_installed() {
  local spec
  for spec in "${py_packages[@]}"; do py_installed "$spec" || return 1; done
  if [ "$python_only" -eq 0 ]; then
    for spec in "${npm_packages[@]}"; do npm_installed "$spec" || return 1; done
  fi
  [ -f "$dest/config.json" ]
}

if [ "$check" -eq 1 ]; then
  all_installed
  exit $?
fi

mkdir -p "$dest"

for spec in "${py_packages[@]}"; do
  py_installed "$spec" && continue
  venv="$(py_venv "$spec")"
  echo "install-published-servers: $spec into ${venv#"$root/"}" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # shellcheck disable=SC2086 # the spec's words are separate requirements
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $spec
  echo "$spec" >"$venv/.installed"
done

if [ "$python_only" -eq 0 ]; then
  missing=()
  for spec in "${npm_packages[@]}"; do npm_installed "$spec" || missing+=("$spec"); done
  if ((${#missing[@]})); then
    command -v npm >/dev/null 2>&1 || {
      echo "install-published-servers: npm is needed for: ${missing[*]}" >&2
      exit 1
    }
    echo "install-published-servers: npm install ${missing[*]}" >&2
    [ -f "$dest/package.json" ] || echo '{"name": "mcpmanager-published-servers", "private": true}' >"$dest/package.json"
    # --ignore-scripts: the postinstall steps only download browsers/binaries from outside the registry
    # (puppeteer's Chrome, ripgrep) or send install telemetry; listing and calling tools needs none.
    (cd "$dest" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --ignore-scripts --save-exact \
      --loglevel=error "${missing[@]}")
  fi
fi

"$python" "$root/scripts/make_published_config.py" "$dest"
