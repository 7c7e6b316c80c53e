"""MCP Apps (`io.modelcontextprotocol/ui`) through mcpmanager, both modes, over `serve --stdio` and
`serve --http`, with the SDK's Client in both eras: as a host that renders apps (it declares the
extension) and as a client that does not.

Two servers of `tests/helpers/apps_server.py`, `clock` (mcpmanager speaks 2026-07-28 to it) and
`gauge` (handshake era only), both use `ui://dashboard/app.html` for pages of their own. What a host
does, replayed: it lists the tools, reads the `ui://` resource a tool names (before or after calling
it), calls the tool, and, for the page's button, calls the app-only tool by its name with a
tools/call of its own (the spec's "app" visibility: the host's app calls it, the model never sees it).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise

from mcpmanager.core.catalogue.apps import EXTENSION, MIME_TYPE
from tests.helpers.apps_server import page
from tests.helpers.asking_clients import Proxy, http_engine
from tests.helpers.clients import http_client, serve_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config

SERVERS = ("clock", "gauge")
HOST = [advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})]  # what a host that renders apps declares
_ROOT = Path(__file__).resolve().parents[2]
META_TOOLS = {"discover_tools", "search_tools_regex", "get_tool_schema", "call_tool"}


def qualified(server: str) -> str:
    """The URI both servers use, told apart by server (they clash on it)."""
    return f"ui://mcpmanager/{server}/dashboard/app.html"


pytestmark = pytest.mark.parametrize(
    ("transport", "mode", "era"),
    [(t, m, e) for t in ("stdio", "http") for m in ("direct", "discovery") for e in ("legacy", "auto")],
)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("apps")
    module = ["-m", "tests.helpers.apps_server", "--name"]
    servers: dict[str, Any] = {
        "clock": {"command": sys.executable, "args": [*module, "clock"], "cwd": str(_ROOT)},
        "gauge": {"command": sys.executable, "args": [*module, "gauge", "--handshake-only"], "cwd": str(_ROOT)},
    }
    config = write_config(folder, servers, supervisor=FAST, proxy={"askBefore": "never"})
    with http_engine(config, folder / "home") as running:
        yield running


@asynccontextmanager
async def client_of(proxy: Proxy, transport: str, mode: str, era: str, home: Path, host: bool) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"extensions": HOST} if host else {}
    if transport == "http":
        async with http_client(f"{proxy.url}/{mode}", proxy.token, era, **options) as client:
            yield client
        return
    home.mkdir(parents=True, exist_ok=True)
    async with serve_client(proxy.config, home, era, mode, **options) as client:
        yield client


async def listed(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def every_server_up(client: Client) -> None:
    """Until both servers' resources are merged (servers start with the engine; nothing is cached)."""

    async def merged() -> bool:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        return uris >= {qualified(s) for s in SERVERS}

    await wait_for(merged, timeout=30)


async def test_a_host_sees_each_ui_tool_reads_its_own_page_and_its_app_calls_the_app_only_tool(
    proxy: Proxy, transport: str, mode: str, era: str, tmp_path: Path
) -> None:
    async with client_of(proxy, transport, mode, era, tmp_path / "host", host=True) as host:
        await every_server_up(host)
        # mcpmanager advertises what its servers declare (the SDK's Apps declares the extension), in
        # server/discover: the handshake era's capabilities have no `extensions` (the SDK sieves it).
        advertised = host.server_capabilities.extensions
        assert (EXTENSION in (advertised or {})) if era == "auto" else advertised is None
        tools = await listed(host)
        shown = {f"show_{s}" for s in SERVERS} | {f"refresh_{s}" for s in SERVERS}
        plain = {f"plain_{s}" for s in SERVERS}
        # Direct: everything. Discovery: the meta-tools and, beside them, the tools a host renders or
        # its apps call (a host renders a UI only for a tool it was told of by name).
        assert set(tools) == (shown | plain if mode == "direct" else shown | META_TOOLS)
        for server in SERVERS:
            # `_meta.ui` as the server wrote it, its URI told apart from the other server's.
            assert tools[f"show_{server}"].meta == {"ui": {"resourceUri": qualified(server)}}
            app_only = {"ui": {"resourceUri": qualified(server), "visibility": ["app"]}}
            assert tools[f"refresh_{server}"].meta == app_only

        # The page each tool names, read from the server that owns it: byte for byte what it serves.
        resources = {str(r.uri): r for r in (await host.list_resources()).resources}
        for server in SERVERS:
            uri = tools[f"show_{server}"].meta["ui"]["resourceUri"]  # type: ignore[index]
            assert resources[uri].mime_type == MIME_TYPE
            [content] = (await host.read_resource(uri)).contents
            assert isinstance(content, types.TextResourceContents)
            assert content.text.encode() == page(server).encode()
            assert content.mime_type == MIME_TYPE
            csp = {"connectDomains": ["https://api.example.com"]}
            assert content.meta == {"ui": {"csp": csp, "prefersBorder": True}}
            assert str(content.uri) == uri

            # The host calls the UI tool; the server heard that its client renders apps (mcpmanager
            # declares the extension, to a 2026-07-28 server and at a handshake-era one's handshake).
            result = await host.call_tool(f"show_{server}", {})
            assert text_of(result) == f"{server} dashboard (the client declared MCP Apps: True)"
            # The page's button: the host's own tools/call of the app-only tool, by its name.
            refreshed = await host.call_tool(f"refresh_{server}", {})
            assert not refreshed.is_error, text_of(refreshed)
            assert text_of(refreshed) == f"{server} refreshed (the client declared MCP Apps: True)"

        if mode == "discovery":  # the meta-tools are the model's: no app-only tool there
            await the_model_never_meets_an_app_only_tool(host)


async def the_model_never_meets_an_app_only_tool(client: Client) -> None:
    found = await client.call_tool("discover_tools", {"query": "refresh the dashboard", "limit": 10})
    entries = {e["name"]: e for e in (found.structured_content or {}).get("tools", [])}
    assert {"show_clock", "show_gauge"} <= set(entries), text_of(found)
    assert not {"refresh_clock", "refresh_gauge"} & set(entries)
    assert entries["show_clock"]["_meta"] == {"ui": {"resourceUri": qualified("clock")}}
    regex = await client.call_tool("search_tools_regex", {"pattern": "refresh|dashboard"})
    assert {e["name"] for e in (regex.structured_content or {}).get("tools", [])} == {"show_clock", "show_gauge"}
    schema = await client.call_tool("get_tool_schema", {"tool_name": "show_gauge"})
    assert (schema.structured_content or {})["_meta"] == {"ui": {"resourceUri": qualified("gauge")}}
    hidden = await client.call_tool("get_tool_schema", {"tool_name": "refresh_gauge"})
    assert hidden.is_error and text_of(hidden) == "Unknown tool 'refresh_gauge'."
    refused = await client.call_tool("call_tool", {"tool_name": "refresh_clock", "arguments": {}})
    assert refused.is_error and "for its server's app alone" in text_of(refused)
    # Nor guessed at from a near spelling, nor suggested: a guess is for a model.
    guessed = await client.call_tool("call_tool", {"tool_name": "refreshClock", "arguments": {}})
    assert guessed.is_error and "refresh_clock" not in text_of(guessed) and "app alone" not in text_of(guessed)


async def test_a_client_without_apps_never_sees_nor_calls_an_app_only_tool(
    proxy: Proxy, transport: str, mode: str, era: str, tmp_path: Path
) -> None:
    async with client_of(proxy, transport, mode, era, tmp_path / "plain", host=False) as client:
        await every_server_up(client)
        tools = await listed(client)
        every = {f"{kind}_{s}" for kind in ("show", "plain") for s in SERVERS}
        assert set(tools) == (every if mode == "direct" else META_TOOLS)
        if mode == "direct":  # a UI tool stays a tool: its text for a client that renders nothing
            assert tools["show_clock"].meta == {"ui": {"resourceUri": qualified("clock")}}
        for server in SERVERS:
            refused = await client.call_tool(f"refresh_{server}", {})
            assert refused.is_error and "for its server's app alone" in text_of(refused)
        if mode == "discovery":
            await the_model_never_meets_an_app_only_tool(client)
