"""Real clients: the SDK's client over `serve --stdio`, over Streamable HTTP with the bearer token,
and through `mcpmanager connect` launched the way a client launches it."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from mcpmanager.core.sdk_compat import mcp_http_client
from tests.helpers.vaults import current_keyring_env


class Notes:
    """Counts tools/list_changed notifications a handshake-era client receives."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1


@asynccontextmanager
async def serve_client(
    config: Path, home: Path, era: str = "legacy", mode: str = "direct", notes: Notes | None = None, **options: Any
) -> AsyncIterator[Client]:
    """`mcpmanager serve --stdio` as a real subprocess, driven by the SDK client (with `options`:
    its callbacks...)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpmanager", "serve", "--stdio", "--mode", mode, "--config", str(config)],
        env={"MCPMANAGER_HOME": str(home), "PYTHONUNBUFFERED": "1", **current_keyring_env()},
    )
    with (home / "serve-stderr.log").open("a") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode=era, message_handler=notes, cache=None, **options
        ) as client:
            yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@asynccontextmanager
async def http_client(url: str, token: str, era: str = "legacy", **options: Any) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, presenting the endpoint's bearer token."""
    async with mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=era, cache=None, **options) as client:
            yield client


def bridge_env(home: Path) -> dict[str, str]:
    """What a client gives the command it launches: little. No DISPLAY: the headless engine starts.
    (Plus the test's private keyring, so that no test reaches the user's.)"""
    path = os.environ.get("PATH", "")
    return {"MCPMANAGER_HOME": str(home), "PATH": path, "PYTHONUNBUFFERED": "1", **current_keyring_env()}


@asynccontextmanager
async def connected(
    home: Path, era: str = "legacy", mode: str | None = None, notes: Notes | None = None, link: str = "socket"
) -> AsyncIterator[Client]:
    """`mcpmanager connect [--mode MODE]` launched the way a client launches it (`link` "http":
    with `--http`, relaying over the engine's HTTP endpoint rather than its local socket)."""
    args = ["-m", "mcpmanager", "connect", *(["--mode", mode] if mode else []), *(["--http"] if link == "http" else [])]
    params = StdioServerParameters(command=sys.executable, args=args, env=bridge_env(home))
    with (home / "connect-stderr.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, message_handler=notes, cache=None) as client:
            yield client
