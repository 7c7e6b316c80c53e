"""What keeps a tool loaded in a client that searches tools itself, on the wire: through `serve --stdio`
and `serve --http`, in both protocol eras, the SDK's client receives the meta-tools and the pinned
(always-on) tools with `_meta["anthropic/alwaysLoad"]: true` (merged into a server's own `_meta` for
its tool), and direct mode's other tools without it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcpmanager.core.proxy.meta_tools import NAMES
from tests.helpers.clients import http_client, serve_client
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http

ALWAYS_LOAD = "anthropic/alwaysLoad"
UI = {"ui": {"resourceUri": "ui://board/view.html"}}
BOARD = {"name": "board", "description": "Show the board.", "inputSchema": {"type": "object"}, "_meta": UI}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([BOARD]))
    servers = {"a": fixture("--name", "a", "--tools-file", str(tools))}
    return write_config(tmp_path, servers, supervisor=FAST, tools={"a:board": {"alwaysOn": True}})


@asynccontextmanager
async def connected(link: str, config: Path, home: Path, era: str, mode: str) -> AsyncIterator[Client]:
    if link == "stdio":
        async with serve_client(config, home, era, mode=mode) as client:
            yield client
    else:
        async with (
            serving_http(config, home, mode=mode) as served,
            http_client(served.url, served.token, era) as client,
        ):
            yield client


async def listed_when_up(client: Client) -> dict[str, dict[str, Any] | None]:
    """tools/list once the server's tools are known (the first answer may come before)."""
    got: dict[str, dict[str, Any] | None] = {}

    async def board_listed() -> bool:
        got.clear()
        got.update({tool.name: tool.meta for tool in (await client.list_tools()).tools})
        return "board" in got

    await wait_for(board_listed, timeout=30)
    return got


@pytest.mark.parametrize("era", ["legacy", "auto"])
@pytest.mark.parametrize("link", ["stdio", "http"])
async def test_the_meta_tools_and_pinned_tools_ask_to_stay_loaded(
    config: Path, home: Path, link: str, era: str
) -> None:
    async with connected(link, config, home, era, "discovery") as client:
        got = await listed_when_up(client)
    assert list(got) == [*NAMES, "board"]
    for name in NAMES:
        assert (got[name] or {}).get(ALWAYS_LOAD) is True, name
    assert got["board"] == {**UI, ALWAYS_LOAD: True}  # the server's `_meta` kept, the key beside it


@pytest.mark.parametrize("link", ["stdio", "http"])
async def test_direct_mode_asks_it_for_the_pinned_tools_alone(config: Path, home: Path, link: str) -> None:
    async with connected(link, config, home, "auto", "direct") as client:
        got = await listed_when_up(client)
    assert got["board"] == {**UI, ALWAYS_LOAD: True}
    others = {name: meta for name, meta in got.items() if name != "board"}
    assert "echo" in others and not [name for name, meta in others.items() if meta and ALWAYS_LOAD in meta]
