"""Write DEST/config.json: an mcpmanager config that starts every server of the second frozen held-out
set installed under DEST (.cache/heldout2-servers/) with dummy credentials, for dumping their tool lists
(scripts/dump-heldout2-catalogue.sh). The catalogue is test-only: see tests/data/heldout2/README.md.

    python3 scripts/make_heldout2_config.py DEST

Standard library only. Servers that are not installed are left out (and named on stderr). Cleaning the
raw dump reuses scripts/make_catalogue_config.py --clean (same DEST/sandbox layout).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

# name -> (npm package, bin name or a path inside the package, extra arguments, environment).
# `{sandbox}` is replaced by DEST/sandbox. Every address points at a closed local port or `.invalid`.
NPM: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    "gitlab": (
        "@zereight/mcp-gitlab",
        "mcp-gitlab",
        [],
        {
            "GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy",
            "GITLAB_API_URL": "https://gitlab.invalid/api/v4",
            "USE_PIPELINE": "true",
            "USE_MILESTONE": "true",
            "USE_GITLAB_WIKI": "true",
        },
    ),
    "bitbucket": (
        "@nexus2520/bitbucket-mcp-server",
        "bitbucket-mcp-server",
        [],
        {
            "BITBUCKET_USERNAME": "dummy",
            "BITBUCKET_APP_PASSWORD": "dummy",
            "BITBUCKET_BASE_URL": "https://bitbucket.invalid",
        },
    ),
    "monday": ("@mondaydotcomorg/monday-api-mcp", "mcp-server-monday-api", ["-t", "dummy"], {}),
    "plane": (
        "@makeplane/plane-mcp-server",
        "plane-mcp-server",
        [],
        {"PLANE_API_KEY": "dummy", "PLANE_WORKSPACE_SLUG": "dummy", "PLANE_API_HOST_URL": "https://plane.invalid/"},
    ),
    "jira": (
        "@aashari/mcp-server-atlassian-jira",
        "mcp-atlassian-jira",
        [],
        {
            "ATLASSIAN_SITE_NAME": "dummy",
            "ATLASSIAN_USER_EMAIL": "user@example.invalid",
            "ATLASSIAN_API_TOKEN": "dummy",
        },
    ),
    "trello": (
        "@delorenj/mcp-server-trello",
        "mcp-server-trello",
        [],
        {"TRELLO_API_KEY": "dummy", "TRELLO_TOKEN": "dummy", "HOME": "{sandbox}/home"},
    ),
    "discord": ("mcp-discord", "mcp-discord", [], {"DISCORD_TOKEN": "dummy"}),
    "teams": ("@floriscornel/teams-mcp", "teams-mcp", [], {"HOME": "{sandbox}/home"}),
    "gmail": ("@gongrzhe/server-gmail-autoauth-mcp", "gmail-mcp", [], {"HOME": "{sandbox}/home"}),
    "postgres": (
        "@henkey/postgres-mcp-server",
        "postgres-mcp",
        ["--connection-string", "postgresql://dummy:dummy@127.0.0.1:1/dummy"],
        {},
    ),
    "airtable": ("airtable-mcp-server", "airtable-mcp-server", [], {"AIRTABLE_API_KEY": "patdummy.dummy"}),
    "pinecone": ("@pinecone-database/mcp", "pinecone-mcp", [], {"PINECONE_API_KEY": "dummy"}),
    "grafana": (
        "@leval/mcp-grafana",
        "mcp-grafana",
        [],
        {"GRAFANA_URL": "http://127.0.0.1:1", "GRAFANA_API_KEY": "dummy", "GRAFANA_SERVICE_ACCOUNT_TOKEN": "dummy"},
    ),
    "vercel": (
        "@robinson_ai_systems/vercel-mcp",
        "vercel-mcp",
        [],
        {"VERCEL_TOKEN": "dummy", "VERCEL_API_TOKEN": "dummy"},
    ),
    "selenium": ("@angiejones/mcp-selenium", "mcp-selenium", [], {}),
}
# Google's OAuth client file format, with dummy values: the gmail server reads it at start.
GCP_KEYS = {
    "installed": {
        "client_id": "dummy.apps.googleusercontent.com",
        "client_secret": "dummy",
        "redirect_uris": ["http://localhost"],
        "auth_uri": "https://accounts.google.invalid/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.invalid/token",
    }
}


def npm_entry(dest: Path, package: str, bin_name: str) -> Path | None:
    folder = dest / "node_modules" / package
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    bins = manifest.get("bin")
    target = bins if isinstance(bins, str) else (bins or {}).get(bin_name)
    if not target and (folder / bin_name).is_file():
        target = bin_name
    path = (folder / target).resolve() if target else None
    return path if path and path.is_file() else None


def fill(value: str, sandbox: Path) -> str:
    return value.replace("{sandbox}", str(sandbox))


def build(dest: Path) -> tuple[dict[str, Any], list[str]]:
    sandbox = dest / "sandbox"
    (sandbox / "home" / ".gmail-mcp").mkdir(parents=True, exist_ok=True)
    keys = json.dumps(GCP_KEYS, indent=1) + "\n"
    (sandbox / "home" / ".gmail-mcp" / "gcp-oauth.keys.json").write_text(keys, encoding="utf-8")
    node = shutil.which("node") or "node"
    servers: dict[str, Any] = {}
    missing: list[str] = []
    for name, (package, bin_name, args, env) in NPM.items():
        entry = npm_entry(dest, package, bin_name)
        if entry is None:
            missing.append(name)
            continue
        servers[name] = {
            "command": node,
            "args": [str(entry), *(fill(a, sandbox) for a in args)],
            "env": {k: fill(v, sandbox) for k, v in env.items()},
        }
    return {"mcpServers": dict(sorted(servers.items()))}, missing


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} DEST", file=sys.stderr)
        return 2
    dest = Path(sys.argv[1]).resolve()
    config, missing = build(dest)
    (dest / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"make_heldout2_config: {len(config['mcpServers'])} servers", file=sys.stderr)
    if missing:
        print(f"make_heldout2_config: not installed, left out: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
