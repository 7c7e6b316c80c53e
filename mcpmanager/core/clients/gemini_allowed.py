"""Gemini CLI's allowlist: when its settings have `mcp.allowed`, Gemini CLI starts only the servers
that list names (seen with Gemini CLI 0.61: a server written without it is listed as "Blocked").
So whatever mcpmanager writes into those settings (its own entry on install, the servers `export`
writes) joins the list, and leaves it again when an undo has to work around later edits (an exact
undo restores the backup's bytes anyway). A file without the list is left without one."""

from __future__ import annotations

from collections.abc import Collection

from mcpmanager.core.clients.json_edit import JsonText


def allow(doc: JsonText, names: Collection[str], allowed: bool = True) -> None:
    """Add `names` to `mcp.allowed` (`allowed`), or take them out of it, if the list is there."""
    settings = doc.value()
    mcp = settings.get("mcp") if isinstance(settings, dict) else None
    current = mcp.get("allowed") if isinstance(mcp, dict) else None
    if not isinstance(current, list):
        return
    added = [*current, *(n for n in names if n not in current)]
    wanted = added if allowed else [n for n in current if n not in names]
    if wanted != current:
        doc.set(("mcp",), "allowed", wanted)
