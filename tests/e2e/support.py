"""Helpers for end-to-end tests: real subprocess servers, real SDK clients."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcpmanager.core.engine.advertisement import read_advertisements

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "servers"
FIXTURE_SERVER = FIXTURES / "fixture_server.py"


def fixture(*flags: str, **extra: Any) -> dict[str, Any]:
    """A config entry that runs the fixture server with these flags."""
    return {"command": sys.executable, "args": [str(FIXTURE_SERVER), *flags], **extra}


def write_config(folder: Path, servers: dict[str, Any], **sections: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps({"mcpServers": servers, **sections}, indent=1), encoding="utf-8")
    return path


FAST = {
    "startTimeout": 10,
    "backoffInitial": 0.2,
    "backoffMax": 1,
    "crashLimit": 3,
    "crashWindow": 30,
    "stopGrace": 1,
}


class Notes:
    """Counts tools/list_changed notifications a handshake-era client receives."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1


@asynccontextmanager
async def serve_client(
    config: Path, home: Path, era: str = "legacy", mode: str = "direct", notes: Notes | None = None
) -> AsyncIterator[Client]:
    """`mcpmanager serve --stdio` as a real subprocess, driven by the SDK client."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpmanager", "serve", "--stdio", "--mode", mode, "--config", str(config)],
        env={"MCPMANAGER_HOME": str(home), "PYTHONUNBUFFERED": "1"},
    )
    with (home / "serve-stderr.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, message_handler=notes, cache=None) as client:
            yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def wait_for(predicate: Any, timeout: float = 20.0, interval: float = 0.05) -> None:
    with anyio.fail_after(timeout):
        while True:
            value = predicate()
            if hasattr(value, "__await__"):
                value = await value
            if value:
                return
            await anyio.sleep(interval)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def home_token(home: Path) -> str:
    """The bearer token an engine under MCPMANAGER_HOME=home made for its HTTP endpoint."""
    return (home / "run" / "token").read_text(encoding="ascii").strip()


@asynccontextmanager
async def http_client(url: str, token: str, era: str = "legacy", **options: Any) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, presenting the endpoint's bearer token."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=era, cache=None, **options) as client:
            yield client


def bridge_env(home: Path) -> dict[str, str]:
    """What a client gives the command it launches: little. No DISPLAY: the headless engine starts."""
    return {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}


@asynccontextmanager
async def connected(
    home: Path, era: str = "legacy", mode: str | None = None, notes: Notes | None = None
) -> AsyncIterator[Client]:
    """`mcpmanager connect [--mode MODE]` launched the way a client launches it."""
    args = ["-m", "mcpmanager", "connect", *(["--mode", mode] if mode else [])]
    params = StdioServerParameters(command=sys.executable, args=args, env=bridge_env(home))
    with (home / "connect-stderr.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, message_handler=notes, cache=None) as client:
            yield client


def engines(home: Path) -> list[dict[str, Any]]:
    return read_advertisements(home / "run")


def engine_pid(home: Path) -> int:
    [engine] = engines(home)
    return int(engine["pid"])


def stop_engines(home: Path) -> None:
    """Engines `connect` started outlive their client on purpose: the test stops them."""
    pids = [int(info["pid"]) for info in engines(home)]
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def user_home(home: Path) -> Path:
    """A user's mcpmanager home (MCPMANAGER_HOME) with two fixture servers, `a` (its tools can
    change) and `b`, in its config; what `connect` tests and benchmarks start engines on."""
    home.mkdir(parents=True)
    servers = {"a": fixture("--name", "a", "--changing-tools"), "b": fixture("--name", "b")}
    (home / "config.json").write_text(json.dumps({"mcpServers": servers, "supervisor": FAST}), encoding="utf-8")
    return home
