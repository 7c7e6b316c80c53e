"""One mcpmanager server as an entry in a client's own format: the writers `mcpmanager export` uses,
one per client, in one table (`WRITERS`). A new client plugs in by adding its writer here.

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
from mcpmanager.core.clients.locations import BY_KEY, CLIENTS
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig


class Unsupported(Exception):
    """The client's file cannot hold this server as it is; str() says why, in one line."""


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


def _claude_desktop(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, HttpServerConfig):
        raise Unsupported(
            "a remote server: Claude Desktop reads only local (stdio) servers from its file "
            "(add it in Claude Desktop's Settings, Connectors)"
        )
    return _stdio(server, CLIENTS["claude-desktop"])


def _cursor(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _stdio(server, CLIENTS["cursor"])
    # Cursor finds the transport itself; "sse" says which, for mcpmanager's import and any reader.
    return _headers(server, {"url": server.url} | ({"type": "sse"} if server.transport == "sse" else {}))


def _typed(label: str) -> Callable[[ServerConfig], dict[str, Any]]:
    """VS Code and Claude Code: every entry says its `type`."""

    def write(server: ServerConfig) -> dict[str, Any]:
        if isinstance(server, StdioServerConfig):
            entry = _stdio(server, label, typed=True)
            return entry if label != CLIENTS["claude-code"] else {**entry, "env": entry.get("env", {})}
        return _headers(server, {"type": server.transport, "url": server.url})

    return write


def _windsurf(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _off(_stdio(server, CLIENTS["windsurf"]), server)
    entry = {"serverUrl": server.url} | ({"type": "sse"} if server.transport == "sse" else {})
    return _off(_headers(server, entry), server)


def _gemini(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _stdio(server, CLIENTS["gemini-cli"], cwd=True)
    key = "httpUrl" if server.transport == "http" else "url"  # url alone is SSE in its documentation
    return _headers(server, {key: server.url})


def _codex(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        entry = _stdio(server, CLIENTS["codex"], cwd=True)
    elif server.transport != "http":
        raise Unsupported("an SSE server: Codex reaches remote servers over Streamable HTTP only")
    else:
        entry = _headers(server, {"url": server.url}, "http_headers")
    if server.start_timeout is not None:
        entry["startup_timeout_sec"] = server.start_timeout
    if server.disabled:
        entry["enabled"] = False
    return entry


def _zed(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        entry = {**_stdio(server, CLIENTS["zed"]), "env": dict(server.env)}  # as Zed's documentation writes it
    elif server.transport != "http":
        raise Unsupported("an SSE server: Zed's file gives a remote server by its url, over Streamable HTTP only")
    else:
        entry = _headers(server, {"url": server.url})
    return {**entry, "enabled": False} if server.disabled else entry


def _cline(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _off(_stdio(server, CLIENTS["cline"], cwd=True), server)
    kind = "streamableHttp" if server.transport == "http" else "sse"  # a url without a type is SSE in Cline
    return _off(_headers(server, {"type": kind, "url": server.url}), server)


def _lm_studio(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig):
        return _stdio(server, CLIENTS["lm-studio"])
    if server.transport != "http":
        raise Unsupported("an SSE server: LM Studio's file gives a remote server by its url (Streamable HTTP)")
    return _headers(server, {"url": server.url})


def _copilot(server: ServerConfig) -> dict[str, Any]:
    """Copilot CLI: a typed entry (stdio, http, sse) with the tools it may use: all of them."""
    if isinstance(server, StdioServerConfig):
        return {**_stdio(server, CLIENTS["copilot-cli"], typed=True), "tools": ["*"]}
    return {**_headers(server, {"type": server.transport, "url": server.url}), "tools": ["*"]}


def _opencode(server: ServerConfig) -> dict[str, Any]:
    try:
        return opencode.entry_of(server)  # in the file's own form: the dialect's `shape`
    except opencode.Unwritable as exc:
        raise Unsupported(str(exc)) from None


def _goose(server: ServerConfig) -> dict[str, Any]:
    if isinstance(server, StdioServerConfig) and server.cwd is not None:
        raise Unsupported(f"it runs in {server.cwd} (cwd), and Goose has no setting for an extension's folder")
    try:
        return goose.extension_of(server)
    except goose.UnsupportedServer:
        raise Unsupported("an SSE server: Goose starts remote extensions over Streamable HTTP only") from None


# The names `codex mcp add` takes ("use letters, numbers, '-', '_'", openai/codex codex-rs/cli mcp_cmd.rs).
_CODEX_NAME = re.compile(r"[A-Za-z0-9_-]+")

_ENTRIES: dict[str, Callable[[ServerConfig], dict[str, Any]]] = {
    "claude-desktop": _claude_desktop,
    "cursor": _cursor,
    "vscode": _typed(CLIENTS["vscode"]),
    "vscode-insiders": _typed(CLIENTS["vscode-insiders"]),
    "claude-code": _typed(CLIENTS["claude-code"]),
    "windsurf": _windsurf,
    "gemini-cli": _gemini,
    "codex": _codex,
    "zed": _zed,
    "cline": _cline,
    "lm-studio": _lm_studio,
    "goose": _goose,  # an extension, as `goose.extension_of` writes it
    "continue": continue_yaml.item_of,  # an item of the `mcpServers` list
    "copilot-cli": _copilot,
    "opencode": _opencode,
}
_NAMES = {"codex": _CODEX_NAME}
WRITERS: dict[str, Writer] = {
    key: Writer(entry, has_switch=BY_KEY[key].switch is not None, name_pattern=_NAMES.get(key))
    for key, entry in _ENTRIES.items()
}


def writer_for(client: str) -> Writer:
    """The client's writer; Unsupported when export does not know the client's format yet."""
    found = WRITERS.get(client)
    if found is None:
        raise Unsupported(f"mcpmanager cannot export to {CLIENTS.get(client, client)} yet")
    return found
