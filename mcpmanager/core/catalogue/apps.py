"""MCP Apps (the `io.modelcontextprotocol/ui` extension) as the catalogue sees it: pure data rules.

A tool with a UI names a `ui://` resource in `_meta.ui.resourceUri` (or, deprecated, the flat
`_meta["ui/resourceUri"]`); a host reads that resource from the tool's server and renders it. A tool
whose `_meta.ui.visibility` leaves out "model" is for its app only: never shown to the model.

Two servers may use the same `ui://` URI for different pages. Tool names clash the same way and get
`server__name`; a `ui://` URI that tools of several servers name is shown qualified by its server
(`ui://mcpmanager/<server>/<the rest>`), in those tools' `_meta.ui` and in the resource lists, and a
read of the qualified URI goes to that server under the URI it wrote. A URI only one server uses
stays as that server wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
# mcpmanager declares MCP Apps to its servers in a host's settings (`supervisor.downstream.CARRIED`):
# it carries the tools' `_meta` and the `ui://` reads for the hosts behind it.

_SCHEME = "ui://"
_QUALIFIED = "ui://mcpmanager/"
_FLAT = "ui/resourceUri"


def ui_meta(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool's `_meta.ui`, as the server wrote it."""
    meta = spec.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else None


def resource_uri(spec: Mapping[str, Any]) -> str | None:
    """The `ui://` resource a tool renders with, or None for a tool without a UI."""
    ui = ui_meta(spec)
    uri = ui.get("resourceUri") if ui else None
    if not isinstance(uri, str):
        meta = spec.get("_meta")
        uri = meta.get(_FLAT) if isinstance(meta, dict) else None
    return uri if isinstance(uri, str) and uri.startswith(_SCHEME) else None


def app_only(spec: Mapping[str, Any]) -> bool:
    """A tool its server gave to its app alone (`visibility` without "model"; the default is both)."""
    ui = ui_meta(spec)
    visibility = ui.get("visibility") if ui else None
    return isinstance(visibility, list) and "model" not in visibility


def declares_apps(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a client declared MCP Apps: a host that renders UIs and keeps app-only tools from its
    model (the extension's identifier is what counts, as in the SDK's negotiation)."""
    extensions = capabilities.extensions if capabilities is not None else None
    return extensions is not None and EXTENSION in extensions


def shared_uris(uris_by_server: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The `ui://` URIs more than one server uses, from (server, uri) pairs."""
    users: dict[str, set[str]] = {}
    for server, uri in uris_by_server:
        users.setdefault(uri, set()).add(server)
    return frozenset(uri for uri, servers in users.items() if len(servers) > 1)


def qualified(server: str, uri: str) -> str:
    """`uri` of `server` told apart from the same URI of another server."""
    return f"{_QUALIFIED}{quote(server, safe='')}/{uri[len(_SCHEME) :]}"


def unqualified(uri: str) -> tuple[str, str] | None:
    """(server, the URI it wrote) for a qualified URI; None for any other."""
    if not uri.startswith(_QUALIFIED):
        return None
    server, slash, rest = uri[len(_QUALIFIED) :].partition("/")
    if not slash or not server:
        return None
    return unquote(server), _SCHEME + rest


def with_resource_uri(spec: Mapping[str, Any], uri: str) -> dict[str, Any]:
    """A tool's definition with its UI resource shown as `uri` (every other field as it came)."""
    meta = dict(spec.get("_meta") or {})
    ui = ui_meta(spec)
    if ui is not None and isinstance(ui.get("resourceUri"), str):
        meta["ui"] = {**ui, "resourceUri": uri}
    if isinstance(meta.get(_FLAT), str):
        meta[_FLAT] = uri
    return {**spec, "_meta": meta}
