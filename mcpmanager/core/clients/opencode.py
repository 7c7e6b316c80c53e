"""OpenCode's servers: the `mcp` object of its `opencode.json` (JSONC, every other OpenCode setting
too), as OpenCode reads it.

Two forms of the file are read (https://opencode.ai/docs/mcp-servers, https://opencode.ai/docs/config;
the newer documentation, https://opencode.ai/v2/docs/mcp-servers):

- `mcp.NAME`, each entry `{"type": "local", "command": ["npx", "-y", "pkg"], "environment": {…},
  "enabled": true}` or `{"type": "remote", "url": "…", "headers": {…}, "enabled": false}`: the
  command and its arguments are one list (no `args`), and `enabled: false` keeps a server off;
- `mcp.servers.NAME` with the same entries and `"disabled": true` instead of `enabled`.

A file whose `mcp.servers` is an object of servers (it has no `type` of its own) is of the second
form. What is written keeps the form the file has; a file that has no servers yet gets the form of
the newer documentation. `timeout` and `oauth` are OpenCode's own: ignored. A remote entry is read
as Streamable HTTP (OpenCode tries it first, then SSE).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpmanager.core.config.json_text import KeyPath
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig

FLAT: KeyPath = ("mcp",)
NESTED: KeyPath = ("mcp", "servers")
SWITCHES = {FLAT: ("enabled", False), NESTED: ("disabled", True)}  # each form's key, and the value for off

Problem = Callable[[KeyPath, str], None]


class Unwritable(ValueError):
    """A server OpenCode's file cannot hold; str() says why."""


def section_of(doc: Any) -> KeyPath:
    """Where the file keeps its servers: `mcp.servers` when that is an object of servers, else `mcp`;
    a file with neither gets the newer documentation's form."""
    mcp = doc.get("mcp") if isinstance(doc, dict) else None
    if not isinstance(mcp, dict) or not mcp:
        return NESTED
    nested = mcp.get("servers")
    return NESTED if isinstance(nested, dict) and "type" not in nested else FLAT


def read_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any] | None:
    """An OpenCode entry as mcpmanager's (`command` + `args`, or `url`; `disabled`), or None with a problem."""
    kind = entry.get("type")
    if kind == "local":
        command = entry.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
            problem(("command",), "expected the command and its arguments as one list of strings; not imported")
            return None
        ours: dict[str, Any] = {"command": command[0], "args": command[1:]}
        if "environment" in entry:
            ours["env"] = entry["environment"]
    elif kind == "remote":
        ours = {"type": "http", **{k: entry[k] for k in ("url", "headers") if k in entry}}
    else:
        problem(("type",), f"expected 'local' or 'remote', got {kind!r}; not imported")
        return None
    if entry.get("enabled") is False or entry.get("disabled") is True:
        ours["disabled"] = True
    return ours


def entry_of(server: ServerConfig, section: KeyPath = FLAT) -> dict[str, Any]:
    """`server` as an OpenCode entry in the form of `section` (its off switch)."""
    key = SWITCHES[section][0]
    if isinstance(server, StdioServerConfig):
        if server.cwd is not None:
            raise Unwritable(f"it runs in {server.cwd} (cwd), and OpenCode has no setting for a server's folder")
        entry: dict[str, Any] = {"type": "local", "command": [server.command, *server.args]}
        if server.env:
            entry["environment"] = dict(server.env)
    else:
        assert isinstance(server, HttpServerConfig)
        if server.transport != "http":
            raise Unwritable("an SSE server: OpenCode's file gives a remote server by its url (Streamable HTTP)")
        entry = {"type": "remote", "url": server.url}
        if server.headers:
            entry["headers"] = dict(server.headers)
    if key == "enabled":
        return {**entry, "enabled": not server.disabled}
    return {**entry, "disabled": True} if server.disabled else entry


def shaped(entry: dict[str, Any], section: KeyPath) -> dict[str, Any]:
    """An entry in the form of `section`: `enabled` or `disabled` (the same entry again unchanged)."""
    entry = dict(entry)
    off = entry.pop("enabled", True) is False or entry.pop("disabled", False) is True
    if SWITCHES[section][0] == "enabled":
        return {**entry, "enabled": not off}
    return {**entry, "disabled": True} if off else entry
