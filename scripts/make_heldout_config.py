"""Write DEST/config.json: an mcpmanager config that starts every held-out server installed under DEST
(.cache/heldout-servers/) with dummy credentials, for dumping their tool lists
(scripts/dump-heldout-catalogue.sh). The held-out catalogue is test-only: see tests/data/heldout/README.md.

    python3 scripts/make_heldout_config.py DEST

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
    "chrome-devtools": (
        "chrome-devtools-mcp",
        "chrome-devtools-mcp",
        ["--headless", "--isolated", "--no-usage-statistics"],
        {},
    ),
    "playwright": ("@executeautomation/playwright-mcp-server", "playwright-mcp-server", [], {}),
    "mobile": ("@mobilenext/mobile-mcp", "mcp-server-mobile", [], {"MOBILEMCP_DISABLE_TELEMETRY": "1"}),
    "shortcut": ("@shortcut/mcp", "mcp-server-shortcut", [], {"SHORTCUT_API_TOKEN": "dummy"}),
    "asana": ("@roychri/mcp-server-asana", "mcp-server-asana", [], {"ASANA_ACCESS_TOKEN": "dummy"}),
    "todoist": ("todoist-mcp", "todoist-mcp", [], {"API_KEY": "dummy"}),
    "linear": ("linear-mcp", "build/index.js", [], {"LINEAR_ACCESS_TOKEN": "lin_api_dummy"}),
    "datadog": (
        "@winor30/mcp-server-datadog",
        "mcp-server-datadog",
        [],
        {"DATADOG_API_KEY": "dummy", "DATADOG_APP_KEY": "dummy", "DATADOG_SITE": "datadog.invalid"},
    ),
    "circleci": (
        "@circleci/mcp-server-circleci",
        "mcp-server-circleci",
        [],
        {"CIRCLECI_TOKEN": "dummy", "CIRCLECI_BASE_URL": "https://circleci.invalid", "DISABLE_TELEMETRY": "true"},
    ),
    "netlify": (
        "@netlify/mcp",
        "netlify-mcp",
        [],
        {"NETLIFY_PERSONAL_ACCESS_TOKEN": "dummy", "HOME": "{sandbox}/home"},
    ),
    "elasticsearch": (
        "@elastic/mcp-server-elasticsearch",
        "mcp-server-elasticsearch",
        [],
        {"ES_URL": "http://127.0.0.1:1", "ES_API_KEY": "dummy"},
    ),
    "launchdarkly": ("@launchdarkly/mcp-server", "mcp", ["start", "--api-key", "api-dummy"], {}),
    "google-calendar": (
        "@cocal/google-calendar-mcp",
        "google-calendar-mcp",
        [],
        {"GOOGLE_OAUTH_CREDENTIALS": "{sandbox}/gcp-oauth.keys.json", "HOME": "{sandbox}/home"},
    ),
}
# name -> (PyPI package = venv folder, command in its bin/, arguments, environment)
PYPI: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    "redis": ("redis-mcp-server", "redis-mcp-server", ["--url", "redis://127.0.0.1:1/0"], {}),
    "pagerduty": (
        "pagerduty-mcp",
        "pagerduty-mcp",
        ["--enable-write-tools"],
        {"PAGERDUTY_USER_API_KEY": "dummy", "PAGERDUTY_API_HOST": "https://pagerduty.invalid"},
    ),
    "clickhouse": (
        "mcp-clickhouse",
        "mcp-clickhouse",
        [],
        {
            "CLICKHOUSE_HOST": "127.0.0.1",
            "CLICKHOUSE_PORT": "1",
            "CLICKHOUSE_USER": "default",
            "CLICKHOUSE_PASSWORD": "",
        },
    ),
    "opensearch": (
        "elasticsearch-mcp-server",
        "opensearch-mcp-server",
        [],
        {"OPENSEARCH_HOSTS": "https://127.0.0.1:1", "OPENSEARCH_USERNAME": "admin", "OPENSEARCH_PASSWORD": "dummy"},
    ),
    "email": ("mcp-email-server", "mcp-email-server", ["stdio"], {"HOME": "{sandbox}/home"}),
}
# Google's OAuth client file format, with dummy values: the calendar server reads it at start.
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
    (sandbox / "home").mkdir(parents=True, exist_ok=True)
    (sandbox / "gcp-oauth.keys.json").write_text(json.dumps(GCP_KEYS, indent=1) + "\n", encoding="utf-8")
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
    for name, (package, command, args, env) in PYPI.items():
        exe = dest / "venvs" / package / "bin" / command
        if not exe.is_file():
            missing.append(name)
            continue
        servers[name] = {
            "command": str(exe),
            "args": [fill(a, sandbox) for a in args],
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
    print(f"make_heldout_config: {len(config['mcpServers'])} servers", file=sys.stderr)
    if missing:
        print(f"make_heldout_config: not installed, left out: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
