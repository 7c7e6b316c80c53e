#!/usr/bin/env bash
# Dump the tool lists of many published MCP servers (npm and PyPI), started for real with dummy
# credentials, into tests/data/catalogues/published.json: the real-world catalogue the resolution
# test set is built on. Installs into .cache/catalogue-servers/ (idempotent), writes its config there,
# lists every server with the SDK client (scripts/list_published_tools.py) and cleans the dump
# (scripts/make_catalogue_config.py --clean: sorted, no local paths).
#
#   scripts/dump-real-catalogue.sh
#
# Needs node/npm, python3 and the project's .venv (for the SDK client). Not part of the test run.
# About 3 minutes from scratch, 20 s once installed; two runs write byte-identical files.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/catalogue-servers"
python="${PYTHON:-python3}"

npm_packages=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-github@2025.4.8"
  "@modelcontextprotocol/server-gitlab@2025.4.25"
  "@modelcontextprotocol/server-slack@2025.4.25"
  "@modelcontextprotocol/server-google-maps@0.6.2"
  "@modelcontextprotocol/server-brave-search@0.6.2"
  "@wonderwhy-er/desktop-commander@0.2.52"
  "@playwright/mcp@0.0.83"
  "@notionhq/notion-mcp-server@2.5.2"
  "@stripe/mcp@0.2.5"
  "@sentry/mcp-server@0.36.0"
  "mcp-server-kubernetes@4.1.7"
  "mongodb-mcp-server@3.0.4"
  "@cloudflare/mcp-server-cloudflare@0.2.0"
  "firecrawl-mcp@3.22.2"
  "@modelcontextprotocol/server-puppeteer@2025.5.12"
  "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
  "exa-mcp-server@3.4.1"
  "@upstash/context7-mcp@4.1.1"
  "tavily-mcp@0.2.22"
)
py_packages=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
  "mcp-server-fetch==2026.10.24"
  "mcp-atlassian==0.23.1"
)
sqlite="mcp-server-sqlite==2025.4.25" # needs the SDK before 2.x in its venv

mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"name": "mcpmanager-catalogue-servers", "private": true}' >"$dest/package.json"
missing=()
for spec in "${npm_packages[@]}"; do
  name="${spec%@*}"
  grep -qs "\"version\": *\"${spec##*@}\"" "$dest/node_modules/$name/package.json" || missing+=("$spec")
done
if ((${#missing[@]})); then
  echo "dump-real-catalogue: npm install ${missing[*]}" >&2
  # --ignore-scripts: no browser or binary downloads; listing tools needs none.
  (cd "$dest" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
    --ignore-scripts --save-exact --loglevel=error "${missing[@]}")
fi
install_py() { # spec, extra pip arguments...
  local spec="$1" venv="$dest/venvs/${1%%==*}"
  shift
  [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$spec" ] && return 0
  echo "dump-real-catalogue: $spec" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" "$spec"
  echo "$spec" >"$venv/.installed"
}
for spec in "${py_packages[@]}"; do install_py "$spec"; done
install_py "$sqlite" "mcp<2"

"$python" "$root/scripts/make_catalogue_config.py" "$dest"
raw="$dest/raw-dump.json"
PYTHONHASHSEED=0 "$root/.venv/bin/python" "$root/scripts/list_published_tools.py" --config "$dest/config.json" \
  --dump "$raw" --timeout 60
"$python" "$root/scripts/make_catalogue_config.py" --clean "$dest" "$raw" "$root/tests/data/catalogues/published.json"
