"""A published MCP App through mcpmanager: `@modelcontextprotocol/server-system-monitor` (the MCP Apps
examples' system monitor, from npm), with a UI tool (`get-system-info`, its `ui://` page) and an
app-only tool its page polls (`poll-system-stats`). Through `serve --http`, both modes, both eras, a
host (the SDK's Client declaring the extension, replaying what a host does) sees what the server
itself lists and serves, byte for byte; a client without MCP Apps never meets the app-only tool."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise
from mcp.client.stdio import stdio_client

from mcpmanager.core.catalogue.apps import EXTENSION, MIME_TYPE
from tests.helpers.asking_clients import Proxy, http_engine
from tests.helpers.clients import http_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.published import PUBLISHED, install_published

pytestmark = [
    pytest.mark.published,
    pytest.mark.parametrize(("mode", "era"), [(m, e) for m in ("direct", "discovery") for e in ("legacy", "auto")]),
]

HOST = [advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})]
UI_TOOL, APP_ONLY, PAGE = "get-system-info", "poll-system-stats", "ui://system-monitor/mcp-app.html"
SCRIPT = "node_modules/@modelcontextprotocol/server-system-monitor/dist/index.js"


def command() -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "node is needed for the npm servers"
    return {"command": node, "args": [str(PUBLISHED / SCRIPT), "--stdio"]}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    install_published()
    folder = tmp_path_factory.mktemp("apps-published")
    config = write_config(folder, {"monitor": command()}, supervisor=FAST, proxy={"askBefore": "never"})
    with http_engine(config, folder / "home") as running:
        yield running


@asynccontextmanager
async def direct_to_server(tmp_path: Path) -> AsyncIterator[Client]:
    """The server itself, as a host reaches it without mcpmanager."""
    spec = command()
    params = StdioServerParameters(command=spec["command"], args=spec["args"])
    with (tmp_path / "monitor-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), cache=None, extensions=HOST) as client:
            yield client


async def test_the_published_app_comes_through_as_the_server_serves_it(
    proxy: Proxy, mode: str, era: str, tmp_path: Path
) -> None:
    async with direct_to_server(tmp_path) as server:
        own = {t.name: t for t in (await server.list_tools()).tools}
        own_page = (await server.read_resource(PAGE)).contents
    assert own[APP_ONLY].meta == {"ui": {"visibility": ["app"]}}  # what this test is about

    async with http_client(f"{proxy.url}/{mode}", proxy.token, era, extensions=HOST) as host:

        async def up() -> bool:
            return UI_TOOL in {t.name for t in (await host.list_tools()).tools}

        await wait_for(up, timeout=60)
        tools = {t.name: t for t in (await host.list_tools()).tools}
        for name in (UI_TOOL, APP_ONLY):  # listed to the host in both modes, `_meta` as the server wrote it
            assert tools[name].meta == own[name].meta
            assert tools[name].input_schema == own[name].input_schema
        assert (await host.read_resource(PAGE)).contents == own_page  # the page, byte for byte
        shown = await host.call_tool(UI_TOOL, {})
        assert not shown.is_error, text_of(shown)
        polled = await host.call_tool(APP_ONLY, {})  # what the page does, through its host
        assert not polled.is_error, text_of(polled)
        if mode == "discovery":
            found = await host.call_tool("discover_tools", {"query": "poll the system stats", "limit": 10})
            assert APP_ONLY not in {e["name"] for e in (found.structured_content or {}).get("tools", [])}
            refused = await host.call_tool("call_tool", {"tool_name": APP_ONLY, "arguments": {}})
            assert refused.is_error and "for its server's app alone" in text_of(refused)

    async with http_client(f"{proxy.url}/{mode}", proxy.token, era) as client:  # no MCP Apps
        listed = {t.name for t in (await client.list_tools()).tools}
        assert APP_ONLY not in listed and (UI_TOOL in listed) == (mode == "direct")
        refused = await client.call_tool(APP_ONLY, {})
        assert refused.is_error and "for its server's app alone" in text_of(refused)
