"""What each mode lists of an MCP App's tools, to a host (it declares the extension) and to another
client, and what the resting-context figure counts of them: the tools a model is shown."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.client.extension import advertise

from mcpmanager.core.catalogue.apps import EXTENSION, MIME_TYPE
from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.token_count import tools_tokens
from tests.helpers.clients import Notes
from tests.helpers.engines import wait_for

UI = {"resourceUri": "ui://clock/app.html"}


def spec(name: str, ui: dict[str, Any] | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    return {**tool, "_meta": {"ui": ui}} if ui is not None else tool


def router(mode: str) -> Router:
    catalogue = Catalogue()
    catalogue.configure(["clock"], {})
    catalogue.load({"clock": [spec("show", UI), spec("refresh", {**UI, "visibility": ["app"]}), spec("plain")]})
    return Router(catalogue, {}, mode)  # type: ignore[arg-type]


def names(proxy: Router, apps: bool) -> list[str]:
    return [t.name for t in proxy.mode_server().tool_list(apps)]


def test_each_mode_lists_for_hosts_and_for_other_clients() -> None:
    direct, discovery = router("direct"), router("discovery")
    assert names(direct, apps=True) == ["show", "refresh", "plain"]
    assert names(direct, apps=False) == ["show", "plain"]  # an app-only tool would reach the model
    assert names(discovery, apps=True) == [*meta.NAMES, "show", "refresh"]  # what a host renders, calls
    assert names(discovery, apps=False) == list(meta.NAMES)


def test_the_resting_figure_counts_the_ui_tools_a_model_is_shown() -> None:
    proxy = router("discovery")
    resting, direct = proxy.context_tokens()
    metas = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in meta.META_TOOLS]
    assert resting == tools_tokens([*metas, spec("show", UI)])  # not the app-only `refresh`
    assert direct == tools_tokens([spec("show", UI), spec("plain")])


async def test_a_change_only_hosts_list_reaches_only_hosts() -> None:
    proxy = router("discovery")
    proxy.reset_notified()
    host_notes, plain_notes = Notes(), Notes()
    host_options: dict[str, Any] = {"extensions": [advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})]}
    async with (
        Client(proxy.server, mode="legacy", cache=None, message_handler=host_notes, **host_options) as host,
        Client(proxy.server, mode="legacy", cache=None, message_handler=plain_notes) as plain,
    ):
        await host.list_tools()
        await plain.list_tools()
        tools = [spec("show", UI), spec("refresh", {**UI, "visibility": ["app"]}), spec("plain"), spec("more", UI)]
        proxy.catalogue.set_tools("clock", tools, save=False)  # a UI tool more: listed to hosts only
        assert await proxy.refresh()
        await wait_for(lambda: host_notes.count == 1, 5)
        assert "more" in names(proxy, apps=True)
        await host.list_tools()  # a round trip on each session after the notification went out
        await plain.list_tools()
    assert (host_notes.count, plain_notes.count) == (1, 0)
