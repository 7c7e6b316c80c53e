"""One mcpmanager server as an entry in a client's own format: the writers `mcpmanager export` uses,
one per shape of entry (`SHAPES`); each row of the clients' table names its shape (`Client.writer`),
so a new client whose entries are shaped like another's is its row alone (`WRITERS`: by client key).

Each writer is the inverse of how `reading` (and `codex_toml`) reads that client's entries, so an
exported file imported back gives the same servers. What a client cannot hold is refused with one
line (`Unsupported`), never written half-right:

| client | stdio | remote | off | `cwd` |
|---|---|---|---|---|
| Claude Desktop | `command`, `args`, `env` | none in its file (connectors) | no switch | no |
| Cursor | `command`, `args`, `env` | `url`, `headers` (`"type": "sse"` for SSE) | no switch | no |
| VS Code | `"type": "stdio"`, `command`, `args`, `env` | `"type"` http or sse, `url`, `headers` | no switch | no |
| Claude Code | `"type": "stdio"`, `command`, `args`, `env` | `"type"` http or sse, `url`, `headers` | no switch | no |
| Windsurf | `command`, `args`, `env` | `serverUrl`, `headers` (`"type": "sse"` for SSE) | `"disabled": true` | no |
| Gemini CLI | `command`, `args`, `env`, `cwd` | `httpUrl` (Streamable HTTP), `url` (SSE), `headers` | no switch | yes |
| Codex | `command`, `args`, `env`, `cwd` | `url`, `http_headers` (Streamable HTTP only) | `enabled = false` | yes |
| Zed (`context_servers`) | `command`, `args`, `env` | `url`, `headers` (Streamable HTTP) | `"enabled": false` | no |
| Cline | `command`, `args`, `env`, `cwd` | `"type"` streamableHttp or sse, `url`, `headers` | `disabled` | yes |
| LM Studio | `command`, `args`, `env` | `url`, `headers` (Streamable HTTP only) | no switch | no |
| Goose | `cmd`, `args`, `envs` | `type: streamable_http`, `uri`, `headers` | `enabled: false` | no |
| Continue (a list) | `name`, `command`, `args`, `env`, `cwd` | `type`, `url`, `requestOptions` | no switch | yes |
| Copilot CLI | `type` stdio, `command`, `args`, `env`, `tools` | `type` http, sse; `url`, `headers` | no switch | no |
| OpenCode | `type` local, `command` (a list), `environment` | `type` remote, `url`, `headers` | `enabled` | no |

"No switch": none of these clients documents a per-server off switch in that file (Claude Desktop's
and Cursor's `disabled` is not honoured reliably: see `install`), so a server that is off in
mcpmanager is refused there unless the user names it (`--servers`): then it is written on.
`startTimeout` goes to Codex's `startup_timeout_sec`; the other clients have no such setting, and
`roots`, `oauth` are mcpmanager's own (a client signs in to a remote server itself).

Sources (each client's current documentation): https://modelcontextprotocol.io/quickstart/user and
https://support.anthropic.com (Claude Desktop: local servers in its file, remote ones as connectors);
https://cursor.com/docs/mcp; https://code.visualstudio.com/docs/copilot/reference/mcp-configuration;
https://docs.anthropic.com/en/docs/claude-code/mcp; https://docs.windsurf.com/windsurf/cascade/mcp;
https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md;
https://developers.openai.com/codex/mcp and https://developers.openai.com/codex/config-reference;
https://zed.dev/docs/ai/mcp; https://docs.cline.bot/mcp/configuring-mcp-servers; https://lmstudio.ai/docs/app/mcp;
https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers; OpenCode's in `opencode`;
Goose's and Continue's in `goose` and `continue_yaml`, whose entry writers these are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.clients import continue_yaml, goose, opencode
from mcpmanager.core.clients.locations import CLIENTS, TABLE, Client
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig


class Unsupported(Exception):
    """The client's file cannot hold this server as it is; str() says why, in one line."""


Entry = Callable[[ServerConfig, str], dict[str, Any]]  # a server as an entry; the client's label for refusals


@dataclass(frozen=True)
class Shape:
    """One shape of entry: how a server is written, and the names the clients of that shape accept."""

    entry: Entry
    name_pattern: re.Pattern[str] | None = None  # names the client accepts; None: any


@dataclass(frozen=True)
class Writer:
    """How one client writes a server: its entry, and the name the client accepts."""

    entry: Callable[[ServerConfig], dict[str, Any]]
    has_switch: bool = False  # the client keeps a server off in its file (its row's `switch`)
    name_pattern: re.Pattern[str] | None = None  # names the client accepts; None: any

    def name(self, name: str) -> str:
        """`name` as the client accepts it (other characters become `-`)."""
        if self.name_pattern is None or self.name_pattern.fullmatch(name):
            return name
        return re.sub(r"-+", "-", re.sub(r"[^A-Za-z0-9_-]", "-", name)).strip("-") or "server"


def _stdio(server: StdioServerConfig, label: str, *, typed: bool = False, cwd: bool = False) -> dict[str, Any]:
    if server.cwd is not None and not cwd:
        raise Unsupported(f"it runs in {server.cwd} (cwd), and {label} has no setting for a server's folder")
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    entry |= {"command": server.command, "args": list(server.args)}
    if server.env:
        entry["env"] = dict(server.env)
    if server.cwd is not None:
        entry["cwd"] = server.cwd
    return entry


def _headers(server: HttpServerConfig, entry: dict[str, Any], key: str = "headers") -> dict[str, Any]:
    if server.headers:
        entry[key] = dict(server.headers)
    return entry


def _off(entry: dict[str, Any], server: ServerConfig) -> dict[str, Any]:
    return {**entry, "disabled": True} if server.disabled else entry


def _local_only(server: ServerConfig, label: str) -> dict[str, Any]:
    """Claude Desktop: local servers in its file, remote ones as connectors."""
    if isinstance(server, HttpServerConfig):
        raise Unsupported(
            f"a remote server: {label} reads only local (stdio) servers from its file "
            f"(add it in {label}'s Settings, Connectors)"
        )
    return _stdio(server, label)


def _url(server: ServerConfig, label: str) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _stdio(server, label)
    # Cursor finds the transport itself; "sse" says which, for mcpmanager's import and any reader.
    return _headers(server, {"url": server.url} | ({"type": "sse"} if server.transport == "sse" else {}))


def _typed(*, env: bool = False) -> Entry:
    """VS Code and Claude Code: every entry says its `type` (Claude Code's stdio entry has `env`, as
    `claude mcp add` writes it)."""

    def write(server: ServerConfig, label: str) -> dict[str, Any]:
        if isinstance(server, StdioServerConfig):
            entry = _stdio(server, label, typed=True)
            return {**entry, "env": entry.get("env", {})} if env else entry
        return _headers(server, {"type": server.transport, "url": server.url})

    return write


def _server_url(server: ServerConfig, label: str) -> dict[str, Any]:
    """Windsurf: `serverUrl` for a remote server, `"disabled": true` for one off."""
    if isinstance(server, StdioServerConfig):
        return _off(_stdio(server, label), server)
    entry = {"serverUrl": server.url} | ({"type": "sse"} if server.transport == "sse" else {})
    return _off(_headers(server, entry), server)


def _http_url(server: ServerConfig, label: str) -> dict[str, Any]:
    """Gemini CLI: `httpUrl` for Streamable HTTP, `url` for SSE, and `cwd`."""
    if isinstance(server, StdioServerConfig):
        return _stdio(server, label, cwd=True)
    key = "httpUrl" if server.transport == "http" else "url"  # url alone is SSE in its documentation
    return _headers(server, {key: server.url})


def _toml_table(server: ServerConfig, label: str) -> dict[str, Any]:
    """Codex: a `[mcp_servers.NAME]` table (`http_headers`, `startup_timeout_sec`, `enabled`)."""
    if isinstance(server, StdioServerConfig):
        entry = _stdio(server, label, cwd=True)
    elif server.transport != "http":
        raise Unsupported(f"an SSE server: {label} reaches remote servers over Streamable HTTP only")
    else:
        entry = _headers(server, {"url": server.url}, "http_headers")
    if server.start_timeout is not None:
        entry["startup_timeout_sec"] = server.start_timeout
    if server.disabled:
        entry["enabled"] = False
    return entry


def _context_server(server: ServerConfig, label: str) -> dict[str, Any]:
    """Zed: `env` always, as its documentation writes it; `"enabled": false` for one off."""
    if isinstance(server, StdioServerConfig):
        entry = {**_stdio(server, label), "env": dict(server.env)}
    elif server.transport != "http":
        raise Unsupported(f"an SSE server: {label}'s file gives a remote server by its url, over Streamable HTTP only")
    else:
        entry = _headers(server, {"url": server.url})
    return {**entry, "enabled": False} if server.disabled else entry


def _transport_typed(server: ServerConfig, label: str) -> dict[str, Any]:
    """Cline: a remote entry's `type` streamableHttp or sse, `cwd`, `"disabled": true` for one off."""
    if isinstance(server, StdioServerConfig):
        return _off(_stdio(server, label, cwd=True), server)
    kind = "streamableHttp" if server.transport == "http" else "sse"  # a url without a type is SSE in Cline
    return _off(_headers(server, {"type": kind, "url": server.url}), server)


def _http_only(server: ServerConfig, label: str) -> dict[str, Any]:
    """LM Studio: Cursor's notation, a remote server by its url over Streamable HTTP only."""
    if isinstance(server, StdioServerConfig):
        return _stdio(server, label)
    if server.transport != "http":
        raise Unsupported(f"an SSE server: {label}'s file gives a remote server by its url (Streamable HTTP)")
    return _headers(server, {"url": server.url})


def _typed_tools(server: ServerConfig, label: str) -> dict[str, Any]:
    """Copilot CLI: a typed entry (stdio, http, sse) with the tools it may use: all of them."""
    if isinstance(server, StdioServerConfig):
        return {**_stdio(server, label, typed=True), "tools": ["*"]}
    return {**_headers(server, {"type": server.transport, "url": server.url}), "tools": ["*"]}


def _local_remote(server: ServerConfig, label: str) -> dict[str, Any]:
    try:
        return opencode.entry_of(server)  # in the file's own form: the dialect's `shape`
    except opencode.Unwritable as exc:
        raise Unsupported(str(exc)) from None


def _extension(server: ServerConfig, label: str) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig) and server.cwd is not None:
        raise Unsupported(f"it runs in {server.cwd} (cwd), and {label} has no setting for an extension's folder")
    try:
        return goose.extension_of(server)
    except goose.UnsupportedServer:
        raise Unsupported(f"an SSE server: {label} starts remote extensions over Streamable HTTP only") from None


def _list_item(server: ServerConfig, label: str) -> dict[str, Any]:
    return continue_yaml.item_of(server)


# The names `codex mcp add` takes ("use letters, numbers, '-', '_'", openai/codex codex-rs/cli mcp_cmd.rs).
_TOML_NAME = re.compile(r"[A-Za-z0-9_-]+")

SHAPES: dict[str, Shape] = {  # by the name a row of the clients' table gives (`Client.writer`)
    "local-only": Shape(_local_only),
    "url": Shape(_url),
    "typed": Shape(_typed()),
    "typed-env": Shape(_typed(env=True)),
    "server-url": Shape(_server_url),
    "http-url": Shape(_http_url),
    "toml-table": Shape(_toml_table, _TOML_NAME),
    "context-server": Shape(_context_server),
    "transport-typed": Shape(_transport_typed),
    "http-only": Shape(_http_only),
    "extension": Shape(_extension),  # an extension, as `goose.extension_of` writes it
    "list-item": Shape(_list_item),  # an item of Continue's `mcpServers` list
    "typed-tools": Shape(_typed_tools),
    "local-remote": Shape(_local_remote),
}


def _writer(client: Client) -> Writer:
    shape = SHAPES[client.writer]
    return Writer(
        lambda server: shape.entry(server, client.label),
        has_switch=client.switch is not None,
        name_pattern=shape.name_pattern,
    )


WRITERS: dict[str, Writer] = {client.key: _writer(client) for client in TABLE}


def writer_for(client: str) -> Writer:
    """The client's writer; Unsupported when export does not know the client's format yet."""
    found = WRITERS.get(client)
    if found is None:
        raise Unsupported(f"mcpmanager cannot export to {CLIENTS.get(client, client)} yet")
    return found
