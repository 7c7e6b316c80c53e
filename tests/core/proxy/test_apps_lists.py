"""What each mode lists of an MCP App's tools, to a host (it declares the extension) and to another
client, and what the resting-context figure counts of them: the tools a model is shown."""

from __future__ import annotations

from typing import Any

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.token_count import tokens_of

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
    assert resting == tokens_of([*metas, spec("show", UI)])  # not the app-only `refresh`
    assert direct == tokens_of([spec("show", UI), spec("plain")])
