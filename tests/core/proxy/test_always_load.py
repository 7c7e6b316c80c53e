"""What keeps a tool loaded in a client that searches tools itself (Claude Code defers every MCP tool
behind its own tool search unless the tool's `_meta["anthropic/alwaysLoad"]` is true): the meta-tools
and the pinned (always-on) tools carry it, merged into the `_meta` a server gave its tool; the other
tools of direct mode do not. The SDK's client on memory streams in front of a router over a
catalogue."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import Client

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.config.settings import ToolSettings
from mcpmanager.core.proxy import meta_tools
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.token_count import tool_tokens

ALWAYS_LOAD = "anthropic/alwaysLoad"
UI = {"ui": {"resourceUri": "ui://notes/board.html"}}  # an MCP Apps tool's own `_meta`


def spec(name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    listed: dict[str, Any] = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    return {**listed, "_meta": meta} if meta is not None else listed


def router(mode: Mode, pinned: tuple[str, ...] = ("notes:board",)) -> Router:
    catalogue = Catalogue()
    catalogue.configure(["notes"], {key: ToolSettings(always_on=True) for key in pinned})
    catalogue.load({"notes": [spec("board", {**UI, "x/other": 1}), spec("add_note"), spec("list_notes")]})
    made = Router(catalogue, {}, mode)
    made.reset_notified()
    return made


async def listed(proxy: Router) -> dict[str, dict[str, Any] | None]:
    async with Client(proxy.server, mode="legacy", cache=None) as client:
        return {tool.name: tool.meta for tool in (await client.list_tools()).tools}


def test_the_key_is_merged_into_the_tools_own_meta_never_replacing_it() -> None:
    tool = types.Tool.model_validate({"name": "board", "inputSchema": {"type": "object"}, "_meta": UI})
    kept = meta_tools.kept_loaded(tool)
    assert kept.meta == {**UI, ALWAYS_LOAD: True}
    assert tool.meta == UI  # the tool given is left as it was
    assert meta_tools.kept_loaded(types.Tool(name="bare", input_schema={"type": "object"})).meta == {ALWAYS_LOAD: True}


async def test_discovery_mode_keeps_the_meta_tools_and_the_pinned_tools_loaded() -> None:
    got = await listed(router("discovery"))
    assert list(got) == [*meta_tools.NAMES, "board"]
    for name in meta_tools.NAMES:
        assert got[name] == {ALWAYS_LOAD: True}, name
    assert got["board"] == {**UI, "x/other": 1, ALWAYS_LOAD: True}  # the server's `_meta` kept beside it


async def test_direct_mode_keeps_only_the_pinned_tools_loaded() -> None:
    got = await listed(router("direct"))
    assert got == {"board": {**UI, "x/other": 1, ALWAYS_LOAD: True}, "add_note": None, "list_notes": None}


async def test_pinning_a_tool_in_direct_mode_tells_the_clients() -> None:
    proxy = router("direct", pinned=())
    assert (await listed(proxy))["add_note"] is None
    direct = proxy.mode_server("direct")
    proxy.catalogue.configure(["notes"], {"notes:add_note": ToolSettings(always_on=True)})
    assert await direct.refresh()  # the same tools, but one's `_meta` changed: list_changed
    assert (await listed(proxy))["add_note"] == {ALWAYS_LOAD: True}
    assert not await direct.refresh()


def test_the_key_costs_no_model_context() -> None:
    """A tool's `_meta` is for the client, which sends the model none of it: not counted."""
    proxy = router("discovery")
    bare = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in meta_tools.META_TOOLS]
    shown = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in proxy.tool_list()][:4]
    assert [tool_tokens(t) for t in shown] == [tool_tokens(t) for t in bare]
    assert all(ALWAYS_LOAD in t["_meta"] for t in shown)
