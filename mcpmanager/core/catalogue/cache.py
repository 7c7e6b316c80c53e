"""The last good tool list of every server, on disk: on start the catalogue is complete at once,
before any downstream server is up, and clients are answered without waiting."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcpmanager.core.system.atomic_write import write_atomic

logger = logging.getLogger(__name__)

ToolDict = dict[str, Any]
VERSION = 1


def load(path: Path) -> dict[str, list[ToolDict]]:
    """Every server's cached tools; nothing when the file is missing or unreadable."""
    return read(path)[0]


def read(path: Path) -> tuple[dict[str, list[ToolDict]], str | None]:
    """Every server's cached tools, and why the file could not be read (None: it could, or is missing)."""
    if not path.exists():
        return {}, None
    found: dict[str, list[ToolDict]] = {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != VERSION:
            return {}, None  # another version's: not damaged, just not ours to read
        for server, entry in data["servers"].items():
            tools = entry["tools"]
            if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
                found[str(server)] = tools
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        # A broken cache costs only the fast start; never the user's work. Say so and go on.
        logger.warning("ignoring the catalogue cache %s: %s", path, exc)
        return {}, str(exc) or type(exc).__name__
    return found, None


def snapshot(server_tools: Mapping[str, list[ToolDict]]) -> dict[str, Any]:
    return {"version": VERSION, "servers": {s: {"tools": t} for s, t in server_tools.items()}}


def write(path: Path, document: dict[str, Any]) -> None:
    try:
        # json.dumps, not json.dump: dump streams through the pure-Python encoder (120 ms for the
        # 500 tools of 27 real servers, against about 10 ms).
        data = json.dumps(document)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data.encode(), 0o600, durable=False)
    except OSError as exc:
        logger.warning("cannot write the catalogue cache %s: %s", path, exc)
