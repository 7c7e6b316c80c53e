"""Name resolution and argument checks against the live catalogue, as the proxy and the CLI use them.

`plan` decides everything about a call before anything is sent: the tool it resolves to and how,
the arguments to forward (repaired) or the isError text a model reads instead. The proxy and
`mcpmanager resolve` both go through it, so the command shows exactly what serving would do.

The name index is rebuilt lazily when the catalogue changes (a server's tools, enabled tools,
aliases); an exposed name is looked up without it. Compiled argument validators are kept per tool
while its schema stays the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments, refusal_text
from mcpmanager.core.resolve.messages import miss_text
from mcpmanager.core.resolve.names import NameResolver, Resolution, Search
from mcpmanager.core.resolve.words import servers_named_in


@dataclass(frozen=True)
class CallPlan:
    resolution: Resolution
    checked: CheckedArguments | None  # None when the name did not resolve
    error: str | None  # the isError text instead of a call; None when the call goes ahead

    @property
    def tool(self) -> CatalogueTool | None:
        return self.resolution.tool

    @property
    def arguments(self) -> dict[str, Any] | None:
        """What to forward (None when refused, or when nothing resolved)."""
        return self.checked.arguments if self.checked is not None else None


class Resolver:
    def __init__(self, catalogue: Catalogue, search: Search | None = None) -> None:
        self.catalogue = catalogue
        self._search = search
        self._names: tuple[int, NameResolver] | None = None
        self._arguments = ArgumentChecker()
        self._declared: tuple[int, dict[str, frozenset[str]]] | None = None

    def names(self) -> NameResolver:
        generation = self.catalogue.generation
        if self._names is None or self._names[0] != generation:
            # An MCP App's app-only tool is called by its exact name (its app's), never guessed at nor
            # suggested: a guess is for a model (`catalogue.apps`).
            tools = [t for t in self.catalogue.tools() if not t.app_only]
            self._names = (generation, NameResolver(tools, self._search))
        return self._names[1]

    def resolve(self, called: str) -> Resolution:
        tool = self.catalogue.get(called)
        if tool is not None:  # the common case: no index needed
            return Resolution(called, tool, "exact")
        return self._within_named_servers(self.names().resolve(called))

    def _within_named_servers(self, resolution: Resolution) -> Resolution:
        """A call that spells out a configured server whose tools are not known (starting, failed) is
        that server's: a respelling or a guess must not put it on another server's tool
        (`github_create_issue` is not GitLab's `create_issue` while GitHub is down)."""
        tool = resolution.tool
        if tool is None or resolution.how not in ("normalized", "fuzzy"):
            return resolution
        named = servers_named_in(resolution.called, self.catalogue.servers)
        if tool.server in named or all(self.catalogue.server_tools(s) is not None for s in named):
            return resolution
        suggestions = tuple(dict.fromkeys((tool.exposed, *resolution.suggestions)))
        return Resolution(resolution.called, None, None, suggestions)

    def _settled_by_arguments(self, resolution: Resolution, arguments: Mapping[str, Any]) -> Resolution:
        """An ambiguous name whose arguments only one candidate takes as they are: `get_current_weather`
        with `{"city": …}` is `get_weather_by_city`, not `get_weather(latitude, longitude)`. Never a
        tool that destroys or does another kind of thing than the name says."""
        fitting = [t for t in resolution.ambiguous if self._arguments.fits(t.key, t.spec, arguments)]
        # Unique among all the candidates first: `sqlite_query({"query": …})` fits `read_query` and
        # `write_query` alike, and stays ambiguous whatever the safety rules would leave.
        if len(fitting) != 1 or self.names().unsafe(resolution.called, fitting[0]) is not None:
            return resolution
        return Resolution(resolution.called, fitting[0], "arguments", ambiguous=resolution.ambiguous)

    def check_arguments(self, tool: CatalogueTool, arguments: Mapping[str, Any] | None) -> CheckedArguments:
        return self._arguments.check(tool.key, tool.name, tool.spec, arguments, tool.params, self._elsewhere(tool))

    def _elsewhere(self, tool: CatalogueTool) -> frozenset[str]:
        """The parameter names the other tools of `tool`'s server declare: passed to this tool, such a
        name says the model may have the other tool in mind (cached per catalogue generation)."""
        generation = self.catalogue.generation
        if self._declared is None or self._declared[0] != generation:
            self._declared = (generation, {})
        by_tool = self._declared[1]
        if tool.key not in by_tool:
            names: set[str] = set()
            for other in self.catalogue.server_tools(tool.server) or []:
                if other.get("name") != tool.name:
                    names.update(_declared_names(other))
            by_tool[tool.key] = frozenset(names - set(_declared_names(tool.spec)))
        return by_tool[tool.key]

    def plan(
        self,
        called: str,
        arguments: Mapping[str, Any] | None,
        via_call_tool: bool = True,
        *,
        check: bool = True,
        search: bool = True,
    ) -> CallPlan:
        """The whole decision; `check=False` stops after the name (arguments are then not looked at);
        `search`: the client can call discover_tools (what a miss suggests doing next)."""
        resolution = self.resolve(called)
        if resolution.tool is None and resolution.ambiguous and arguments is not None and check:
            resolution = self._settled_by_arguments(resolution, arguments)
        tool = resolution.tool
        if tool is None:
            return CallPlan(resolution, None, miss_text(resolution, search))
        if not check:
            return CallPlan(resolution, None, None)
        checked = self.check_arguments(tool, arguments)
        if checked.refused:
            return CallPlan(resolution, checked, refusal_text(tool.exposed, tool.spec, checked, via_call_tool))
        return CallPlan(resolution, checked, None)


def _declared_names(spec: Mapping[str, Any]) -> list[str]:
    schema = spec.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return [name for name in properties if isinstance(name, str)] if isinstance(properties, dict) else []
