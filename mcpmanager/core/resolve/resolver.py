"""Name resolution and argument checks against the live catalogue, as the proxy and the CLI use them.

The name index is rebuilt lazily when the catalogue changes (a server's tools, enabled tools,
aliases); compiled argument validators are kept per tool across changes while its schema stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpmanager.core.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments
from mcpmanager.core.resolve.names import NameResolver, Resolution, Search


class Resolver:
    def __init__(self, catalogue: Catalogue, search: Search | None = None) -> None:
        self.catalogue = catalogue
        self._search = search
        self._names: tuple[int, NameResolver] | None = None
        self._arguments = ArgumentChecker()

    def names(self) -> NameResolver:
        generation = self.catalogue.generation
        if self._names is None or self._names[0] != generation:
            self._names = (generation, NameResolver(self.catalogue.tools(), self._search))
        return self._names[1]

    def resolve(self, called: str) -> Resolution:
        return self.names().resolve(called)

    def check_arguments(self, tool: CatalogueTool, arguments: Mapping[str, Any] | None) -> CheckedArguments:
        return self._arguments.check(tool.key, tool.name, tool.spec, arguments, tool.params)
