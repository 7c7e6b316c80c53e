"""Write .cache/published/config.json: an mcpmanager config for the published servers installed there.

Called by scripts/install-published-servers.sh (`python3 make_published_config.py DEST`). Standard library
only. Also prepares the sandbox the servers work in: an allowed folder for the filesystem server, the
memory server's file, a small git repository with an unstaged change for the git server, and a home
folder for desktop-commander (it writes its settings under ~). Servers that are not installed are left
out (e.g. after --python-only), the two deliberately broken ones are always in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

# name -> (npm package folder under node_modules, bin name in its package.json)
NPM_SERVERS: dict[str, tuple[str, str]] = {
    "everything": ("@modelcontextprotocol/server-everything", "mcp-server-everything"),
    "filesystem": ("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem"),
    "memory": ("@modelcontextprotocol/server-memory", "mcp-server-memory"),
    "github": ("@modelcontextprotocol/server-github", "mcp-server-github"),
    "desktop-commander": ("@wonderwhy-er/desktop-commander", "desktop-commander"),
}
PY_SERVERS = {"time": "mcp-server-time", "git": "mcp-server-git", "fetch": "mcp-server-fetch"}


def npm_entry(dest: Path, package: str, bin_name: str) -> Path | None:
    """The JS file a package's bin points to (run with node directly: no PATH lookup of `node`)."""
    folder = dest / "node_modules" / package
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    bins = manifest.get("bin")
    target = bins if isinstance(bins, str) else (bins or {}).get(bin_name)
    if not target:
        return None
    path = (folder / target).resolve()
    return path if path.is_file() else None


def make_git_repo(repo: Path) -> None:
    """A tiny repository with two commits and an unstaged change (created once, then left alone)."""
    if (repo / ".git").exists():
        return
    repo.mkdir(parents=True, exist_ok=True)

    def git(*args: str) -> None:
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    git("config", "user.name", "mcpmanager tests")
    git("config", "user.email", "tests@mcpmanager.invalid")
    (repo / "README.md").write_text("# sandbox\n\nA repository for mcp-server-git.\n", encoding="utf-8")
    git("add", "README.md")
    git("commit", "-q", "-m", "Initial commit")
    (repo / "notes.txt").write_text("first line\n", encoding="utf-8")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "Add notes")
    (repo / "notes.txt").write_text("first line\nan unstaged change\n", encoding="utf-8")


def make_sandbox(sandbox: Path) -> dict[str, Path]:
    files = sandbox / "files"
    files.mkdir(parents=True, exist_ok=True)
    hello = files / "hello.txt"
    if not hello.exists():
        hello.write_text("Hello from the mcpmanager sandbox.\n", encoding="utf-8")
    home = sandbox / "desktop-commander-home"
    home.mkdir(parents=True, exist_ok=True)
    repo = sandbox / "repo"
    if shutil.which("git"):
        make_git_repo(repo)
    return {"files": files, "memory": sandbox / "memory.jsonl", "repo": repo, "home": home}


def build_config(dest: Path) -> tuple[dict[str, Any], list[str]]:
    sandbox = dest / "sandbox"
    places = make_sandbox(sandbox)
    node = shutil.which("node") or "node"
    servers: dict[str, Any] = {}
    skipped: list[str] = []

    npm_extra: dict[str, tuple[list[str], dict[str, str]]] = {
        "everything": (["stdio"], {}),
        "filesystem": ([str(sandbox)], {}),
        "memory": ([], {"MEMORY_FILE_PATH": str(places["memory"])}),
        "github": ([], {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy_token_for_offline_tests"}),
        # HOME: it keeps its settings in ~/.claude-server-commander; no telemetry, no onboarding prompts.
        "desktop-commander": (
            ["--no-onboarding"],
            {"HOME": str(places["home"]), "DESKTOP_COMMANDER_DISABLE_TELEMETRY": "1"},
        ),
    }
    for name, (package, bin_name) in NPM_SERVERS.items():
        entry = npm_entry(dest, package, bin_name)
        if entry is None:
            skipped.append(name)
            continue
        args, env = npm_extra[name]
        servers[name] = {"command": node, "args": [str(entry), *args]}
        if env:
            servers[name]["env"] = env

    py_extra: dict[str, list[str]] = {
        "time": ["--local-timezone", "UTC"],
        "git": ["--repository", str(places["repo"])],
        "fetch": [],
    }
    for name, package in PY_SERVERS.items():
        exe = dest / "venvs" / package / "bin" / package
        if not exe.is_file():
            skipped.append(name)
            continue
        servers[name] = {"command": str(exe), "args": py_extra[name]}

    # Deliberately broken: a command that is not on PATH, and one that fails at once with a message.
    servers["missing"] = {"command": "mcp-server-that-does-not-exist", "args": []}
    servers["exits"] = {"command": "sh", "args": ["-c", 'echo "fatal: no API key" >&2; exit 3']}
    return {"mcpServers": servers}, skipped


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} DEST  (the .cache/published folder)", file=sys.stderr)
        return 2
    dest = Path(sys.argv[1]).resolve()
    config, skipped = build_config(dest)
    path = dest / "config.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    names = ", ".join(config["mcpServers"])
    print(f"make_published_config: wrote {path} ({names})", file=sys.stderr)
    if skipped:
        print(f"make_published_config: not installed, left out: {', '.join(skipped)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
