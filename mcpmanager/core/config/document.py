"""The typed config written back into its JSON document, losing nothing.

The typed sections are merged into a copy of the document as it was read: unknown keys are kept,
values that did not change stay as the user wrote them (30 stays 30, not 30.0), an absent key stays
absent while its value is the default, and a server whose transport changed loses the old
transport's keys (they would mislead the next load).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mcpmanager.core.config.options import options_of
from mcpmanager.core.config.servers import SERVER_TYPES, TRANSPORT_KEYS, ServerConfig, StdioServerConfig
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings


def write_document(
    document: Mapping[str, Any],
    servers: Mapping[str, ServerConfig],
    tools: Mapping[str, ToolSettings],
    synonyms: Mapping[str, list[str]],
    proxy: ProxySettings,
    supervisor: SupervisorSettings,
) -> dict[str, Any]:
    """`document` (left as it is) with the typed sections written in."""
    doc = copy.deepcopy(dict(document))
    old_servers = _dict(doc.get("mcpServers"))
    doc["mcpServers"] = {name: _server_entry(server, _dict(old_servers.get(name))) for name, server in servers.items()}
    old_tools, written = _dict(doc.get("tools")), {}
    for key, settings in tools.items():
        entry = _options(_dict(old_tools.get(key)), settings)
        if entry or key in old_tools:  # no empty entry for a tool reset to defaults
            written[key] = entry
    _put(doc, "tools", written, {})
    _put(doc, "synonyms", dict(synonyms), {})
    _put(doc, "proxy", _options(_dict(doc.get("proxy")), proxy), {})
    _put(doc, "supervisor", _options(_dict(doc.get("supervisor")), supervisor), {})
    return doc


def _options(entry: dict[str, Any], settings: object) -> dict[str, Any]:
    for key, value, default in options_of(settings):
        _put(entry, key, _num(value), default)
    return entry


def _server_entry(server: ServerConfig, old: dict[str, Any]) -> dict[str, Any]:
    kind = "stdio" if isinstance(server, StdioServerConfig) else server.transport
    entry = dict(old)
    if _entry_kind(old) != kind:
        # New, or its transport changed: the old transport's keys would mislead the next load.
        for key in TRANSPORT_KEYS:
            entry.pop(key, None)
        if kind != "stdio":
            entry["type"] = kind  # explicit for new remote servers, as VS Code and Cursor expect
    if isinstance(server, StdioServerConfig):
        _put(entry, "command", server.command)
        _put(entry, "args", server.args, [])
        _put(entry, "env", server.env, {})
        _put(entry, "cwd", server.cwd)
    else:
        _put(entry, "url", server.url)
        _put(entry, "headers", server.headers, {})
        _put(entry, "oauth", server.oauth.document(_dict(old.get("oauth"))) if server.oauth else None)
    _put(entry, "disabled", server.disabled, False)
    _put(entry, "startTimeout", _num(server.start_timeout))
    _put(entry, "roots", server.roots)
    return entry


def _entry_kind(entry: dict[str, Any]) -> str | None:
    """The transport an entry on disk declares, as loading would read it (None: no entry)."""
    declared = entry.get("type")
    if isinstance(declared, str) and declared in SERVER_TYPES:
        return SERVER_TYPES[declared]
    if "command" in entry:
        return "stdio"
    return "http" if "url" in entry else None


def _put(entry: dict[str, Any], key: str, value: Any, default: Any = None) -> None:
    """Set `key` only when it changes; an absent key stays absent while `value` is the default."""
    if key in entry and entry[key] == value:
        return  # unchanged: keep it as written (30 stays 30, not 30.0)
    if value is None or (key not in entry and value == default):
        entry.pop(key, None)
    else:
        entry[key] = copy.deepcopy(value)  # the document must not share lists/dicts with the dataclasses


def _num(value: Any) -> Any:
    """Whole numbers written as integers: `"startTimeout": 45`, not 45.0."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
