"""MCP Apps rules of the catalogue (`core/catalogue/apps.py`), and the catalogue and offerings telling
apart the same `ui://` URI of two servers."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from mcpmanager.core.catalogue import apps
from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.catalogue.offerings import Offerings, ServerOffers
from mcpmanager.core.supervisor.downstream import CARRIED


def tool(name: str, ui: Any = None, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    if ui is not None or meta:
        spec["_meta"] = {**({"ui": ui} if ui is not None else {}), **meta}
    return spec


def test_the_constants_are_the_sdks_and_what_mcpmanager_declares_downstream() -> None:
    assert (apps.EXTENSION, apps.MIME_TYPE) == (EXTENSION_ID, APP_MIME_TYPE)
    assert CARRIED == {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}


def test_a_tools_ui_and_visibility() -> None:
    assert apps.resource_uri(tool("a", {"resourceUri": "ui://x/a.html"})) == "ui://x/a.html"
    assert apps.resource_uri(tool("a", **{"ui/resourceUri": "ui://x/a.html"})) == "ui://x/a.html"  # deprecated
    assert apps.resource_uri(tool("a", {"resourceUri": "https://x/a.html"})) is None  # not a UI resource
    assert apps.resource_uri(tool("a")) is None
    assert apps.app_only(tool("a", {"visibility": ["app"]}))
    assert not apps.app_only(tool("a", {"visibility": ["model", "app"]}))
    assert not apps.app_only(tool("a", {"resourceUri": "ui://x"}))  # the default is both


def test_declaring_apps_is_naming_the_extension() -> None:
    assert apps.declares_apps(types.ClientCapabilities(extensions={EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}))
    assert not apps.declares_apps(types.ClientCapabilities(extensions={"com.example/other": {}}))
    assert not apps.declares_apps(types.ClientCapabilities())
    assert not apps.declares_apps(None)


def test_a_qualified_uri_names_its_server_and_the_uri_it_wrote() -> None:
    for server in ("clock", "my server/2", "ünï"):
        uri = apps.qualified(server, "ui://dashboard/app.html?x=1")
        assert uri.startswith("ui://mcpmanager/")
        assert apps.unqualified(uri) == (server, "ui://dashboard/app.html?x=1")
    assert apps.unqualified("ui://dashboard/app.html") is None
    assert apps.unqualified("ui://mcpmanager/") is None


def test_rewriting_keeps_every_other_field() -> None:
    spec = tool("a", {"resourceUri": "ui://x", "visibility": ["app"]}, other=1, **{"ui/resourceUri": "ui://x"})
    shown = apps.with_resource_uri(spec, "ui://mcpmanager/s/x")
    meta = {"ui": {"resourceUri": "ui://mcpmanager/s/x", "visibility": ["app"]}, "other": 1}
    assert shown == {**spec, "_meta": {**meta, "ui/resourceUri": "ui://mcpmanager/s/x"}}
    assert spec["_meta"]["ui"]["resourceUri"] == "ui://x"  # the server's definition is untouched


def test_the_catalogue_qualifies_only_a_uri_two_servers_use() -> None:
    catalogue = Catalogue()
    catalogue.configure(["a", "b"], {})
    catalogue.set_tools("a", [tool("show", {"resourceUri": "ui://page"}), tool("own", {"resourceUri": "ui://a"})])
    catalogue.set_tools("b", [tool("view", {"resourceUri": "ui://page", "visibility": ["app"]})])
    shown = {t.exposed: apps.resource_uri(t.exposed_spec()) for t in catalogue.tools()}
    assert shown == {
        "show": apps.qualified("a", "ui://page"),
        "own": "ui://a",
        "view": apps.qualified("b", "ui://page"),
    }
    assert catalogue.shared_ui_uris() == {"ui://page"}
    assert [t.exposed for t in catalogue.tools() if t.app_only] == ["view"]


def test_offerings_list_a_shared_ui_resource_once_per_server() -> None:
    offerings = Offerings()
    offerings.configure(["a", "b", "c"])
    page = {"uri": "ui://page", "name": "page", "mimeType": APP_MIME_TYPE}
    offerings.set_offers("a", ServerOffers(resources=(page,)))
    offerings.set_offers("b", ServerOffers(resources=(page, {"uri": "ui://only-b", "name": "b"})))
    offerings.set_offers("c", ServerOffers(resources=({"uri": "test://same", "name": "c"},)))
    uris = {r.uri: r.server for r in offerings.resources()}
    assert uris == {
        apps.qualified("a", "ui://page"): "a",
        apps.qualified("b", "ui://page"): "b",
        "ui://only-b": "b",
        "test://same": "c",
    }
    # A URI only tools share (a server may leave its UI resources out of its list) is qualified too.
    offerings.shared_ui = lambda: frozenset({"ui://only-b"})
    offerings.refresh()
    assert apps.qualified("b", "ui://only-b") in {r.uri for r in offerings.resources()}
