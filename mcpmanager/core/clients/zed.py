"""Zed's servers: the `context_servers` object of its user `settings.json` (JSONC), as Zed reads it.

Zed's settings schema (`ContextServerSettingsContent` in zed-industries/zed, `crates/settings`) knows
three kinds of entry, told apart by their keys:

- a command (stdio): `command` (a string), `args`, `env`, and `timeout`, `remote`; the form Zed
  documented before, `command: {"path", "args", "env"}` (often with `"settings": {}`), is read too,
  as is `"source": "custom"` (once the tag of a custom server; Zed ignores it now);
- a remote server: `url` and `headers` (Streamable HTTP; with no `Authorization` header Zed signs in
  with MCP's OAuth);
- a server of a Zed extension: `settings` only, or `"source": "extension"`: Zed starts it from the
  extension, so there is nothing here to import (a problem says so).

Every kind has `enabled` (default true): Zed's own switch, which its Settings → AI → MCP Servers
toggle writes (zed-industries/zed#32994) and which Zed honours by not starting the server. So
`install --disable-served` writes `"enabled": false` into each served server's entry rather than
moving it into mcpmanager's `disabledByMcpmanager` stash, which in this file of every other Zed
setting would be an unknown setting Zed's settings editor flags.

Sources: https://zed.dev/docs/ai/mcp (custom servers: `command`, `args`, `env`; remote: `url`,
`headers`), https://github.com/zed-industries/zed/blob/main/docs/src/ai/mcp.md, and the settings
schema above.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpmanager.core.config.json_text import KeyPath

SECTION: KeyPath = ("context_servers",)
SWITCH = ("enabled", False)  # the key Zed reads, and the value that turns a server off

Problem = Callable[[KeyPath, str], None]  # a key path below the entry, and what is wrong there


def read_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any] | None:
    """A `context_servers` entry as mcpmanager's (`command`/`url` entry, `disabled`), or None for a
    server of a Zed extension (with a problem)."""
    entry = dict(entry)
    source = entry.pop("source", None)
    if source == "extension" or ("command" not in entry and "url" not in entry and "settings" in entry):
        problem((), "a server of a Zed extension: Zed starts it from the extension; not imported")
        return None
    command = entry.get("command")
    if isinstance(command, dict):  # the older form: {"path", "args", "env"}
        if "path" not in command:
            problem(("command",), 'expected "path" in Zed\'s older command object; not imported')
            return None
        entry.update({key: command[key] for key in ("args", "env") if key in command})
        entry["command"] = command["path"]
    enabled = entry.pop("enabled", True)
    if isinstance(enabled, bool):
        entry["disabled"] = not enabled
    else:
        problem(("enabled",), "expected true or false; read as enabled")
    for key in ("settings", "remote", "timeout"):  # Zed's own: no place in mcpmanager
        entry.pop(key, None)
    return entry


def bridge_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """mcpmanager's entry (`command`, `args`) in Zed's current documented form."""
    return {**entry, "env": {}}
