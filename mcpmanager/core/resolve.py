"""Tool-name resolution: from what a model called to a catalogue tool, or to "did you mean".

Order: the exact exposed name → a namespaced form (`server:tool`, `server.tool`, `server/tool`,
`server__tool`, `server_tool`) → the server's own name when only one server has it. Anything else is
not resolved; the caller gets the closest names as suggestions.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from mcpmanager.core.catalogue import Catalogue, CatalogueTool

_SEPARATORS = (":", "/", ".", "__")


@dataclass(frozen=True)
class Resolution:
    tool: CatalogueTool | None
    how: str | None  # "exact", "namespaced", "original"
    suggestions: list[str] = field(default_factory=list)


def _fold(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def resolve_name(catalogue: Catalogue, called: str, visible: set[str] | None = None) -> Resolution:
    """Resolve `called`; `visible` limits which exposed names count (None: every tool)."""
    tools = [t for t in catalogue.tools() if visible is None or t.exposed in visible]
    by_exposed = {t.exposed: t for t in tools}
    if called in by_exposed:
        return Resolution(by_exposed[called], "exact")
    namespaced = _namespaced(tools, called)
    if namespaced is not None:
        return Resolution(namespaced, "namespaced")
    same_name = [t for t in tools if t.name == called]
    if len(same_name) == 1:
        return Resolution(same_name[0], "original")
    return Resolution(None, None, suggest(tools, called, ambiguous=same_name))


def _namespaced(tools: list[CatalogueTool], called: str) -> CatalogueTool | None:
    for separator in (*_SEPARATORS, "_"):
        start = 0
        while (index := called.find(separator, start)) > 0:
            server, name = called[:index], called[index + len(separator) :]
            start = index + 1
            for tool in tools:
                if _fold(tool.server) == _fold(server) and tool.name == name:
                    return tool
    return None


def suggest(tools: list[CatalogueTool], called: str, ambiguous: list[CatalogueTool] | None = None) -> list[str]:
    """Up to five exposed names close to `called` (the ambiguous same-name tools first)."""
    names = [t.exposed for t in ambiguous or []]
    folded = {t.exposed: _fold(t.name) for t in tools}
    target = _fold(called.split(":")[-1].split("/")[-1])
    ranked = difflib.get_close_matches(target, list(folded.values()), n=8, cutoff=0.6)
    for match in ranked:
        names.extend(e for e, f in folded.items() if f == match and e not in names)
    return names[:5]
