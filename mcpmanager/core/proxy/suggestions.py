"""Always-on suggestions from use: tools a client keeps reaching through discovery.

A tool found with `discover_tools` and called costs a search round trip every time; listed always-on
it costs its definition in every client's resting context instead. The suggestion names the tools
called often through discovery (what `Learning` counted) with that price in tokens, so the person
choosing weighs both; nothing is changed without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.proxy.learned import LearnedStore
from mcpmanager.core.proxy.token_count import tool_tokens

MIN_CALLS = 3  # calls through discovery before a tool is worth its context
MAX_SUGGESTIONS = 5


@dataclass(frozen=True)
class Suggestion:
    tool: CatalogueTool
    calls: int  # through discovery, as learned
    tokens: int  # what listing it would add to every client's resting context

    def describe(self) -> dict[str, Any]:
        return {"server": self.tool.server, "tool": self.tool.name, "name": self.tool.exposed,
                "calls": self.calls, "tokens": self.tokens}  # fmt: skip


def always_on_suggestions(
    catalogue: Catalogue, store: LearnedStore, minimum: int = MIN_CALLS, limit: int = MAX_SUGGESTIONS
) -> list[Suggestion]:
    """The enabled tools not always-on yet, called at least `minimum` times through discovery, the
    most called first (fewer tokens first among equals)."""
    by_key = {t.key: t for t in catalogue.tools()}
    found = [
        Suggestion(tool, calls, tool_tokens(tool.exposed_spec()))
        for key, calls in store.calls_by_tool().items()
        if calls >= minimum and (tool := by_key.get(key)) is not None and not tool.always_on
    ]
    found.sort(key=lambda s: (-s.calls, s.tokens, s.tool.exposed))
    return found[:limit]
