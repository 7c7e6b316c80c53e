"""The entry keys of their own that Windsurf, Gemini CLI and Copilot CLI write in their `mcpServers`,
read as mcpmanager's: each a reading hook of its dialect (`json_reading.Reading.entry`), called with
the entry and a way to tell a problem (a key path below the entry, and what is wrong there).

- Windsurf: `serverUrl` is read as `url` (when both are written, `serverUrl`, with a problem if they
  differ).
- Gemini CLI: `httpUrl` is a Streamable HTTP server; `url` is one too when `type` says `http`, and
  SSE when it says `sse` or nothing (as Gemini CLI's documentation has it; newer versions try
  Streamable HTTP first: a problem says so). `httpUrl` comes before `url`, and either before
  `command`, as in Gemini CLI (a problem names what is not read). Its `$VAR` and `%VAR%` in `env`
  values are left as written (`GEMINI_VARIABLE`).
- Copilot CLI: `"type": "local"` is its other name for stdio; its `tools` list is its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mcpmanager.core.config.json_text import KeyPath

Problem = Callable[[KeyPath, str], None]

GEMINI_VARIABLE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%")  # Gemini CLI's, in env


def windsurf_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any]:
    if "serverUrl" not in entry:
        return entry
    entry = dict(entry)
    server_url = entry.pop("serverUrl")
    if "url" in entry and entry["url"] != server_url:
        problem(("url",), "not read: serverUrl is written too, and comes first")
    entry["url"] = server_url
    return entry


def gemini_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any]:
    if "httpUrl" not in entry and "url" not in entry:
        return entry
    entry = dict(entry)
    ignored = [key for key in ("url", "command") if key in entry]
    if "httpUrl" in entry:
        for key in ignored:
            del entry[key]
        entry["url"], entry["type"] = entry.pop("httpUrl"), "http"
    else:
        ignored.remove("url")
        entry.pop("command", None)
        if "type" not in entry:
            entry["type"] = "sse"
            problem(
                ("url",),
                "read as SSE, as Gemini CLI's documentation has it (newer Gemini CLI tries Streamable "
                'HTTP first): if the server speaks Streamable HTTP, make its type "http" in mcpmanager',
            )
    for key in ignored:
        problem((key,), "not read: Gemini CLI uses httpUrl before url, and a URL before command")
    return entry


def copilot_entry(entry: dict[str, Any], problem: Problem) -> dict[str, Any]:
    return {**entry, "type": "stdio"} if entry.get("type") == "local" else entry
