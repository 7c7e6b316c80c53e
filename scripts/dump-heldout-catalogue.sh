#!/usr/bin/env bash
# Dump the tool lists of the held-out published MCP servers (npm and PyPI), started for real with
# dummy credentials and no reachable service, into tests/data/heldout/catalogue.json: the TEST-ONLY
# catalogue of the frozen held-out set (tests/data/heldout/README.md; do not tune on it). Installs into
# .cache/heldout-servers/ (git-ignored, idempotent), writes its config there
# (scripts/make_heldout_config.py), lists every server with the SDK client
# (scripts/list_published_tools.py) and cleans the dump (scripts/make_catalogue_config.py --clean:
# sorted, no local paths).
#
#   scripts/dump-heldout-catalogue.sh
#
# Needs node/npm, python3 (3.11), a Python 3.12 for pagerduty-mcp ($PYTHON312, else python3.12 or a
# pyenv 3.12) and the project's .venv (for the SDK client). Not part of the test run. About 3 minutes
# from scratch, 40 s once installed (pagerduty-mcp takes 20 s to start); two runs write byte-identical
# files.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/heldout-servers"
python="${PYTHON:-python3}"
python312="${PYTHON312:-}"
if [ -z "$python312" ]; then # a pyenv shim may exist without working: try it
  for candidate in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12; do
    if "$candidate" --version >/dev/null 2>&1; then
      python312="$candidate"
      break
    fi
  done
fi

npm_packages=(
  "chrome-devtools-mcp@1.11.0"
  "@executeautomation/playwright-mcp-server@1.0.12"
  "@mobilenext/mobile-mcp@1.0.4"
  "@shortcut/mcp@0.25.0"
  "@roychri/mcp-server-asana@1.8.0"
  "todoist-mcp@1.3.4"
  "linear-mcp@1.2.0"
  "@winor30/mcp-server-datadog@1.8.0"
  "@circleci/mcp-server-circleci@0.20.0"
  "@netlify/mcp@1.15.1"
  "@elastic/mcp-server-elasticsearch@0.3.1"
  "@launchdarkly/mcp-server@0.6.2"
  "@cocal/google-calendar-mcp@2.6.3"
)
py_packages=(
  "redis-mcp-server==0.5.1"
  "mcp-clickhouse==0.7.0"
  "elasticsearch-mcp-server==2.1.6" # serves opensearch-mcp-server too: the `opensearch` server
  "mcp-email-server==1.13.3"
)
py312_packages=(
  "pagerduty-mcp==1.1.0"
)

mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"name": "mcpmanager-heldout-servers", "private": true}' >"$dest/package.json"
missing=()
for spec in "${npm_packages[@]}"; do
  name="${spec%@*}"
  grep -qs "\"version\": *\"${spec##*@}\"" "$dest/node_modules/$name/package.json" || missing+=("$spec")
done
if ((${#missing[@]})); then
  echo "dump-heldout-catalogue: npm install ${missing[*]}" >&2
  # --ignore-scripts: no browser or binary downloads; listing tools needs none.
  (cd "$dest" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
    --ignore-scripts --save-exact --loglevel=error "${missing[@]}")
fi
install_py() { # interpreter, spec
  local interpreter="$1" spec="$2" venv="$dest/venvs/${2%%==*}"
  [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$spec" ] && return 0
  echo "dump-heldout-catalogue: $spec" >&2
  rm -rf "$venv"
  "$interpreter" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$spec"
  echo "$spec" >"$venv/.installed"
}
for spec in "${py_packages[@]}"; do install_py "$python" "$spec"; done
for spec in "${py312_packages[@]}"; do
  if [ -z "$python312" ] && [ ! -f "$dest/venvs/${spec%%==*}/.installed" ]; then
    echo "dump-heldout-catalogue: $spec needs Python 3.12: set PYTHON312" >&2
    exit 1
  fi
  install_py "${python312:-python3.12}" "$spec"
done

"$python" "$root/scripts/make_heldout_config.py" "$dest"
raw="$dest/raw-dump.json"
PYTHONHASHSEED=0 "$root/.venv/bin/python" "$root/scripts/list_published_tools.py" --config "$dest/config.json" \
  --dump "$raw" --timeout 60
mkdir -p "$root/tests/data/heldout"
"$python" "$root/scripts/make_catalogue_config.py" --clean "$dest" "$raw" "$root/tests/data/heldout/catalogue.json"
