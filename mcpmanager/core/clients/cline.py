"""Cline's servers: the `mcpServers` object of `cline_mcp_settings.json`, as Cline reads it.

Cline (the VS Code extension `saoudrizwan.claude-dev`, its CLI and its SDK) validates each entry with
a zod union tried in this order (`src/services/mcp/schemas.ts` in cline/cline):

- stdio: any entry with `command` (`args`, `cwd`, `env`; `type` absent or `"stdio"`);
- SSE: `url`, with `type` `"sse"` or no `type` at all (listed before Streamable HTTP on purpose, so
  an untyped URL stays SSE for the users who configured one before Streamable HTTP existed);
- Streamable HTTP: `url` with `"type": "streamableHttp"`.

The legacy `transportType` (`"stdio"`, `"sse"`, `"http"` for Streamable HTTP) counts when `type` is
absent. `disabled`, `autoApprove` and `timeout` are on every entry; `disabled` is read, the other two
are Cline's own. Cline parses the file with `JSON.parse`: strict JSON, no comments (install writes none).

Turning a server off: `"disabled": true` is Cline's documented per-server switch (the Enable/Disable
toggle in its MCP Servers view writes it, and Cline starts no disabled server), so `install
--disable-served` writes it into each served server's entry instead of moving the entry into
mcpmanager's `disabledByMcpmanager` stash.

Sources: https://docs.cline.bot/mcp/configuring-mcp-servers (`command`, `args`, `env`, `disabled`,
`autoApprove`, `url`, `headers`, `type`), https://docs.cline.bot/getting-started/config (where the
file is), cline/cline `src/services/mcp/schemas.ts`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpmanager.core.config.json_text import KeyPath

SECTION: KeyPath = ("mcpServers",)
SWITCH = ("disabled", True)  # the key Cline reads, and the value that turns a server off

_TYPES = {"stdio": "stdio", "sse": "sse", "streamableHttp": "http"}
_LEGACY = {"stdio": "stdio", "sse": "sse", "http": "http"}  # `transportType`; "http" was Streamable HTTP

Problem = Callable[[KeyPath, str], None]


def read_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any] | None:
    """A Cline entry as mcpmanager's: its `type` (or `transportType`, or Cline's default) as `type`;
    None, with a problem, for a type Cline does not have."""
    entry = dict(entry)
    legacy = entry.pop("transportType", None)
    declared = entry.get("type")
    if "command" in entry and declared in (None, "stdio"):
        return entry  # stdio comes first in Cline, a `url` beside the command notwithstanding
    if isinstance(declared, str) and declared in _TYPES:
        entry["type"] = _TYPES[declared]
    elif declared is None and isinstance(legacy, str) and legacy in _LEGACY:
        entry["type"] = _LEGACY[legacy]
    elif declared is None and "url" in entry:
        entry["type"] = "sse"  # Cline's default for a URL without a type
    elif declared is not None:
        problem(("type",), f"unknown type {declared!r} (Cline's are stdio, sse and streamableHttp); not imported")
        return None
    return entry
