"""Write .cache/catalogue-servers/config.json: an mcpmanager config that starts every published server
installed there with dummy credentials, for dumping their tool lists (scripts/dump-real-catalogue.sh).

    python3 scripts/make_catalogue_config.py DEST                 write DEST/config.json
    python3 scripts/make_catalogue_config.py --clean DEST RAW OUT  RAW dump → OUT, ready to commit

Standard library only. Servers that are not installed are left out (and named on stderr).
desktop-commander is started with a preload that hides the container marker /.dockerenv (see
NO_CONTAINER_JS). Cleaning sorts the tools (servers by name, tools as served), drops empty
annotations, replaces the sandbox path (should a server write it into a description) by a neutral
one, and refuses to write a dump that still names this machine.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

# name -> (npm package, bin name, extra arguments, environment). `{sandbox}` is replaced.
NPM: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    "everything": ("@modelcontextprotocol/server-everything", "mcp-server-everything", ["stdio"], {}),
    "filesystem": ("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", ["{sandbox}"], {}),
    "memory": (
        "@modelcontextprotocol/server-memory",
        "mcp-server-memory",
        [],
        {"MEMORY_FILE_PATH": "{sandbox}/m.jsonl"},
    ),
    "github": (
        "@modelcontextprotocol/server-github",
        "mcp-server-github",
        [],
        {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy"},
    ),
    "gitlab": (
        "@modelcontextprotocol/server-gitlab",
        "mcp-server-gitlab",
        [],
        {"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy", "GITLAB_API_URL": "https://gitlab.invalid/api/v4"},
    ),
    "slack": (
        "@modelcontextprotocol/server-slack",
        "mcp-server-slack",
        [],
        {"SLACK_BOT_TOKEN": "xoxb-dummy", "SLACK_TEAM_ID": "T00000000"},
    ),
    "google-maps": (
        "@modelcontextprotocol/server-google-maps",
        "mcp-server-google-maps",
        [],
        {"GOOGLE_MAPS_API_KEY": "dummy"},
    ),
    "brave-search": (
        "@modelcontextprotocol/server-brave-search",
        "mcp-server-brave-search",
        [],
        {"BRAVE_API_KEY": "dummy"},
    ),
    "desktop-commander": (
        "@wonderwhy-er/desktop-commander",
        "desktop-commander",
        ["--no-onboarding"],
        {"HOME": "{sandbox}/home", "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1"},
    ),
    "playwright": ("@playwright/mcp", "mcp-server-playwright", ["--headless"], {}),
    "notion": ("@notionhq/notion-mcp-server", "notion-mcp-server", [], {"NOTION_TOKEN": "ntn_dummy"}),
    "stripe": ("@stripe/mcp", "mcp", ["--tools=all", "--api-key=sk_test_dummy"], {}),
    "sentry": ("@sentry/mcp-server", "sentry-mcp", ["--access-token=dummy"], {}),
    "kubernetes": ("mcp-server-kubernetes", "mcp-server-kubernetes", [], {"KUBECONFIG": "{sandbox}/kubeconfig"}),
    "mongodb": ("mongodb-mcp-server", "mongodb-mcp-server", [], {"HOME": "{sandbox}/home"}),
    "firecrawl": ("firecrawl-mcp", "firecrawl-mcp", [], {"FIRECRAWL_API_KEY": "fc-dummy"}),
    "puppeteer": ("@modelcontextprotocol/server-puppeteer", "mcp-server-puppeteer", [], {}),
    "sequential-thinking": (
        "@modelcontextprotocol/server-sequential-thinking",
        "mcp-server-sequential-thinking",
        [],
        {},
    ),
    "exa": ("exa-mcp-server", "exa-mcp-server", [], {"EXA_API_KEY": "dummy"}),
    "context7": ("@upstash/context7-mcp", "context7-mcp", [], {}),
    "tavily": ("tavily-mcp", "tavily-mcp", [], {"TAVILY_API_KEY": "tvly-dummy"}),
    "cloudflare": (
        "@cloudflare/mcp-server-cloudflare",
        "mcp-server-cloudflare",
        ["run", "0123456789abcdef0123456789abcdef"],
        {"CLOUDFLARE_API_TOKEN": "dummy"},
    ),
}
ATLASSIAN_ENV = {
    "JIRA_URL": "https://example.atlassian.net",
    "JIRA_USERNAME": "user@example.com",
    "JIRA_API_TOKEN": "dummy",
    "CONFLUENCE_URL": "https://example.atlassian.net/wiki",
    "CONFLUENCE_USERNAME": "user@example.com",
    "CONFLUENCE_API_TOKEN": "dummy",
    "PYTHONHASHSEED": "0",
}
# A cluster that does not exist: the Kubernetes server only reads the file at start.
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: dummy}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
"""
# desktop-commander describes the machine it runs on in its tool descriptions; where it finds
# /.dockerenv it adds a container section naming this machine's mounts and host name. Node loads this
# file first (`--require`) and hides that marker, so the descriptions are those of an ordinary Linux
# machine. Nothing else is changed.
NO_CONTAINER_JS = """// Written by scripts/make_catalogue_config.py: hide the container marker (see there).
const fs = require("fs");
const existsSync = fs.existsSync;
fs.existsSync = (path) => (path === "/.dockerenv" ? false : existsSync(path));
require("module").syncBuiltinESMExports();
"""
NODE_PRELOAD = {"desktop-commander": "no-container.cjs"}
# name -> (PyPI package = venv folder = command, arguments, environment)
PYPI: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "time": ("mcp-server-time", ["--local-timezone", "UTC"], {}),
    "git": ("mcp-server-git", ["--repository", "{sandbox}"], {}),
    "fetch": ("mcp-server-fetch", [], {}),
    "sqlite": ("mcp-server-sqlite", ["--db-path", "{sandbox}/test.db"], {}),
    "atlassian": ("mcp-atlassian", [], ATLASSIAN_ENV),
}


def npm_entry(dest: Path, package: str, bin_name: str) -> Path | None:
    folder = dest / "node_modules" / package
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    bins = manifest.get("bin")
    target = bins if isinstance(bins, str) else (bins or {}).get(bin_name) or next(iter((bins or {}).values()), None)
    path = (folder / target).resolve() if target else None
    return path if path and path.is_file() else None


def fill(value: str, sandbox: Path) -> str:
    return value.replace("{sandbox}", str(sandbox))


def build(dest: Path) -> tuple[dict[str, Any], list[str]]:
    sandbox = dest / "sandbox"
    (sandbox / "home").mkdir(parents=True, exist_ok=True)
    (sandbox / "kubeconfig").write_text(KUBECONFIG, encoding="utf-8")
    (sandbox / "no-container.cjs").write_text(NO_CONTAINER_JS, encoding="utf-8")
    node = shutil.which("node") or "node"
    servers: dict[str, Any] = {}
    missing: list[str] = []
    for name, (package, bin_name, args, env) in NPM.items():
        entry = npm_entry(dest, package, bin_name)
        if entry is None:
            missing.append(name)
            continue
        preload = ["--require", str(sandbox / NODE_PRELOAD[name])] if name in NODE_PRELOAD else []
        servers[name] = {
            "command": node,
            "args": [*preload, str(entry), *(fill(a, sandbox) for a in args)],
            "env": {k: fill(v, sandbox) for k, v in env.items()},
        }
    for name, (package, args, env) in PYPI.items():
        exe = dest / "venvs" / package / "bin" / package
        if not exe.is_file():
            missing.append(name)
            continue
        servers[name] = {
            "command": str(exe),
            "args": [fill(a, sandbox) for a in args],
            "env": {k: fill(v, sandbox) for k, v in env.items()},
        }
    return {"mcpServers": dict(sorted(servers.items()))}, missing


NEUTRAL_PATH = "/home/user/projects"


def clean(dest: Path, raw: Path, out: Path) -> int:
    sandbox = str((dest / "sandbox").resolve())
    tools = json.loads(raw.read_text(encoding="utf-8").replace(sandbox, NEUTRAL_PATH))
    order = {name: i for i, name in enumerate(sorted({t["server"] for t in tools}))}
    tools = sorted(tools, key=lambda t: order[t["server"]])  # stable: tools keep their served order
    for tool in tools:
        if not tool.get("annotations"):
            tool.pop("annotations", None)
        if tool.get("description") is None:
            tool["description"] = ""
    text = json.dumps(tools, indent=1, ensure_ascii=False) + "\n"
    local = {str(dest.resolve()), str(dest.resolve().parent.parent), str(Path.home()), "ENVIRONMENT DETECTED"}
    found = sorted(marker for marker in local if marker in text)
    if found:
        print(f"make_catalogue_config: this machine is still in the dump: {', '.join(found)}", file=sys.stderr)
        return 1
    out.write_text(text, encoding="utf-8")
    counts = {name: sum(t["server"] == name for t in tools) for name in order}
    print(f"make_catalogue_config: {len(tools)} tools: {counts}", file=sys.stderr)
    return 0


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--clean":
        return clean(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} DEST", file=sys.stderr)
        return 2
    dest = Path(sys.argv[1]).resolve()
    config, missing = build(dest)
    (dest / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"make_catalogue_config: {len(config['mcpServers'])} servers", file=sys.stderr)
    if missing:
        print(f"make_catalogue_config: not installed, left out: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
