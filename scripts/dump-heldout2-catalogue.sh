#!/usr/bin/env bash
# Dump the tool lists of the second frozen held-out set's published MCP servers (npm), started for real
# with dummy credentials and no reachable service, into tests/data/heldout2/catalogue.json: the TEST-ONLY
# catalogue of tests/data/heldout2/README.md (do not tune on it). Installs into .cache/heldout2-servers/
# (git-ignored, idempotent), writes its config there (scripts/make_heldout2_config.py), lists every
# server with the SDK client (scripts/list_published_tools.py) and cleans the dump
# (scripts/make_catalogue_config.py --clean: sorted, no local paths).
#
#   scripts/dump-heldout2-catalogue.sh
#
# Needs node/npm, python3 and the project's .venv (for the SDK client). Not part of the test run.
# About 1.5 minutes from scratch, 15 s once installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/heldout2-servers"
python="${PYTHON:-python3}"

npm_packages=(
  "@zereight/mcp-gitlab@2.1.64"
  "@nexus2520/bitbucket-mcp-server@3.0.0"
  "@mondaydotcomorg/monday-api-mcp@3.3.0"
  "@makeplane/plane-mcp-server@0.1.5"
  "@aashari/mcp-server-atlassian-jira@3.3.0"
  "@delorenj/mcp-server-trello@1.8.1"
  "mcp-discord@1.3.4"
  "@floriscornel/teams-mcp@0.3.2"
  "@gongrzhe/server-gmail-autoauth-mcp@1.1.11"
  "@henkey/postgres-mcp-server@1.0.7"
  "airtable-mcp-server@1.14.0"
  "@pinecone-database/mcp@0.3.0"
  "@leval/mcp-grafana@1.1.7"
  "@robinson_ai_systems/vercel-mcp@1.0.1"
  "@angiejones/mcp-selenium@0.2.3"
)

mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"name": "mcpmanager-heldout2-servers", "private": true}' >"$dest/package.json"
missing=()
for spec in "${npm_packages[@]}"; do
  name="${spec%@*}"
  grep -qs "\"version\": *\"${spec##*@}\"" "$dest/node_modules/$name/package.json" || missing+=("$spec")
done
if ((${#missing[@]})); then
  echo "dump-heldout2-catalogue: npm install ${missing[*]}" >&2
  # --ignore-scripts: no browser or binary downloads; listing tools needs none.
  (cd "$dest" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
    --ignore-scripts --save-exact --loglevel=error "${missing[@]}")
fi

"$python" "$root/scripts/make_heldout2_config.py" "$dest"
raw="$dest/raw-dump.json"
PYTHONHASHSEED=0 "$root/.venv/bin/python" "$root/scripts/list_published_tools.py" --config "$dest/config.json" \
  --dump "$raw" --timeout 60
mkdir -p "$root/tests/data/heldout2"
"$python" "$root/scripts/make_catalogue_config.py" --clean "$dest" "$raw" "$root/tests/data/heldout2/catalogue.json"
