"""Real, published MCP servers (npm and PyPI) installed by scripts/install-published-servers.sh into
.cache/published/, their config, and how tests watch an engine that serves them (`mcpmanager status`)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import write_config

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install-published-servers.sh"
PUBLISHED = ROOT / ".cache" / "published"
INSPECTOR = PUBLISHED / "node_modules" / ".bin" / "mcp-inspector"
INSTALL_TIMEOUT = 900

ERAS = ["legacy", "auto"]
GOOD = ["everything", "filesystem", "memory", "github", "desktop-commander", "time", "git", "fetch"]
BROKEN = ["missing", "exits"]
# Tools that both filesystem and desktop-commander have: never exposed bare.
CLASHING = {
    "read_file",
    "read_multiple_files",
    "write_file",
    "create_directory",
    "list_directory",
    "move_file",
    "get_file_info",
}
VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Short enough that broken servers settle and a killed one comes back quickly; long enough for eight
# Node and Python servers starting at once on a slow CI machine.
SUPERVISOR = {
    "startTimeout": 60,
    "callTimeout": 60,
    "startingWait": 60,
    "backoffInitial": 0.2,
    "backoffMax": 1,
    "crashLimit": 3,
    "crashWindow": 30,
    "stopGrace": 1,
}
CATALOGUE_TIMEOUT = 120  # every server up (or failed) after a cold start
CALL_TIMEOUT = 60

Servers = dict[str, dict[str, Any]]
Config = dict[str, Any]


# Install and config ---------------------------------------------------------------------------------


def install_published() -> Config:
    """Install the published servers (a no-op when they are) and return the generated config."""
    try:
        done = subprocess.run(
            ["bash", str(INSTALL)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = exc.output.decode(errors="replace") if isinstance(exc.output, bytes) else exc.output
        pytest.fail(f"{INSTALL.name} did not finish within {INSTALL_TIMEOUT} s:\n{output or ''}")
    if done.returncode != 0:
        pytest.fail(f"{INSTALL.name} failed (exit {done.returncode}):\n{done.stdout}")
    config: Config = json.loads((PUBLISHED / "config.json").read_text(encoding="utf-8"))
    assert set(config["mcpServers"]) == {*GOOD, *BROKEN}, done.stdout
    return config


def make_config(published: Config, folder: Path, only: list[str] | None = None, **supervisor: Any) -> Path:
    """A copy of the published config (optionally just some servers) with short supervisor timeouts.
    The memory server gets a file of its own, so runs do not grow the shared sandbox's graph."""
    servers = copy.deepcopy(published["mcpServers"])
    if only is not None:
        servers = {name: servers[name] for name in only}
    if "memory" in servers:
        servers["memory"].setdefault("env", {})["MEMORY_FILE_PATH"] = str(folder / "memory.jsonl")
    # About serving, not asking: desktop-commander's start_process is destructive by its annotations.
    return write_config(folder, servers, supervisor={**SUPERVISOR, **supervisor}, proxy={"askBefore": "never"})


def sandbox(published: Config) -> Path:
    """The folder the filesystem server is allowed to use (its last argument)."""
    return Path(published["mcpServers"]["filesystem"]["args"][-1])


def git_repo(published: Config) -> Path:
    args = published["mcpServers"]["git"]["args"]
    return Path(args[args.index("--repository") + 1])


# Observing the engine -------------------------------------------------------------------------------


def status(home: Path) -> Servers:
    out = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "status", "--json"],
        env={"MCPMANAGER_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert out.returncode == 0, f"mcpmanager status failed ({out.returncode}): {out.stdout}{out.stderr}"
    [engine] = json.loads(out.stdout)["engines"]
    return engine["servers"]  # type: ignore[no-any-return]


async def wait_status(home: Path, check: Callable[[Servers], bool], timeout: float, what: str) -> Servers:
    """Poll `mcpmanager status` until `check` holds; fail with the last status seen if it never does."""
    seen: list[Servers] = []

    async def holds() -> bool:
        servers = await anyio.to_thread.run_sync(status, home)
        seen[:] = [servers]
        return check(servers)

    try:
        await wait_for(holds, timeout=timeout, interval=0.1)
    except TimeoutError:
        last = json.dumps(seen[0] if seen else None, indent=1)
        pytest.fail(f"not {what} within {timeout} s; last status:\n{last}\n{serve_log(home)}")
    return seen[0]


def serve_log(home: Path) -> str:
    path = home / "serve-stderr.log"
    tail = path.read_text(errors="replace").splitlines()[-40:] if path.exists() else []
    return "serve stderr (tail):\n" + "\n".join(tail)


def state_is(server: str, state: str) -> Callable[[Servers], bool]:
    return lambda servers: servers[server]["state"] == state


def catalogue_complete(servers: Servers) -> bool:
    return all(servers[name]["state"] == "ready" for name in GOOD) and all(
        servers[name]["state"] == "failed" for name in BROKEN
    )


def read_cached_tools(home: Path) -> dict[str, list[str]]:
    path = home / "cache" / "catalogue.json"
    if not path.exists():
        return {}
    document = json.loads(path.read_text(encoding="utf-8"))
    return {server: [t["name"] for t in entry["tools"]] for server, entry in document["servers"].items()}


async def cached_tools(home: Path, servers: list[str]) -> dict[str, list[str]]:
    """Each server's own tool names, from the engine's catalogue cache (what the servers listed).
    The engine writes the cache once per burst, a moment after the servers come up: wait for it."""
    seen: dict[str, list[str]] = {}

    async def holds() -> bool:
        seen.clear()
        seen.update(await anyio.to_thread.run_sync(read_cached_tools, home))
        return all(server in seen for server in servers)

    try:
        await wait_for(holds, timeout=10, interval=0.1)
    except TimeoutError:
        pytest.fail(f"the catalogue cache never held {servers}; it holds {sorted(seen)}")
    return seen


def group_members(pgid: int) -> set[int]:
    """Every live process whose process group is `pgid`."""
    members = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid:
            members.add(int(stat.parent.name))
    return members


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "?"


# Talking to the proxy -------------------------------------------------------------------------------


async def listed(client: Client) -> list[str]:
    with anyio.fail_after(CALL_TIMEOUT):
        return [tool.name for tool in (await client.list_tools()).tools]


async def call(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool(name, arguments)
    assert not result.is_error, f"{name} failed: {text_of(result)}"
    return result
