"""Tools whose names carry their server's brand inside: `list_shadcn_components` of
`shadcn-ui-server` is `list_components` with the server's name put in. A call that names no
server and spells another server's `list-components` fits it as well, so neither is the one meant.

Only words no other server's tools use count as a brand: `chart` of `mcp-server-chart` names what
`ppt`'s `add_chart` makes too. These names are rivals only, never resolutions of their own: a
call is not taken onto a tool by leaving a word out of its name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.resolve.actions import is_verb
from mcpmanager.core.resolve.words import NOISE_WORDS, name_keys, words


class BrandedNames:
    def __init__(self, tools: Iterable[CatalogueTool], parts: Mapping[str, tuple[str, ...]]) -> None:
        tools = list(tools)
        servers_of: dict[str, set[str]] = defaultdict(set)  # word of a tool's name → the tools' servers
        for tool in tools:
            for word in parts[tool.key]:
                servers_of[word].add(tool.server)
        self._unbranded: dict[str | None, list[CatalogueTool]] = defaultdict(list)
        for tool in tools:
            brand = {w for w in words(tool.server) if w not in NOISE_WORDS and not is_verb(w)}
            brand = {w for w in brand if servers_of[w] == {tool.server}}
            unbranded = tuple(w for w in parts[tool.key] if w not in brand)
            if len(unbranded) >= 2 and unbranded != parts[tool.key]:
                self._unbranded[name_keys(unbranded)[0]].append(tool)

    def rivals(self, spellings: Iterable[tuple[str, ...]], tool: CatalogueTool) -> list[CatalogueTool]:
        """Other servers' tools that are one of `spellings` (a call's words) with their brand inside."""
        found: list[CatalogueTool] = []
        for spelled in spellings:
            for other in self._unbranded.get(name_keys(spelled)[0], []):
                if other.server != tool.server and other not in found:
                    found.append(other)
        return found
