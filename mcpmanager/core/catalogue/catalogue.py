"""The merged tool catalogue: every enabled tool of every enabled server under its exposed name.

Tools are kept as the JSON dicts their server listed, so the proxy passes schemas through exactly.
The last good list of every server is cached on disk: on start the catalogue is complete at once,
before any downstream server is up, and clients are answered without waiting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpmanager.core.catalogue import apps, cache
from mcpmanager.core.catalogue.exposed_names import assign_exposed_names
from mcpmanager.core.config.settings import ToolSettings
from mcpmanager.core.signals import Signal

ToolDict = dict[str, Any]


@dataclass(frozen=True)
class ToolEntry:
    """One tool of an enabled server as a manager lists it: disabled tools included (to re-enable)."""

    server: str
    name: str
    exposed: str | None  # None while the tool is disabled
    spec: ToolDict
    settings: ToolSettings
    cached: bool  # its server has not listed it in this run yet (from the disk cache)

    @property
    def key(self) -> str:
        return f"{self.server}:{self.name}"

    @property
    def description(self) -> str:
        return str(self.spec.get("description") or "")


@dataclass(frozen=True)
class CatalogueTool:
    server: str
    name: str  # the server's own name for it
    exposed: str  # the name clients see
    spec: ToolDict  # the tool as the server listed it (name, description, inputSchema, ...)
    always_on: bool = False
    aliases: tuple[str, ...] = ()  # other names the config gives it (`tools."server:tool".aliases`)
    params: dict[str, str] = field(default_factory=dict)  # argument alias → declared parameter
    shown_uri: str | None = None  # its `ui://` resource as clients see it, when qualified (`apps`)

    @property
    def key(self) -> str:
        return f"{self.server}:{self.name}"

    @property
    def description(self) -> str:
        return str(self.spec.get("description") or "")

    @property
    def app_only(self) -> bool:
        """For its MCP App alone: never shown to the model (`apps.app_only`)."""
        return apps.app_only(self.spec)

    @property
    def has_ui(self) -> bool:
        return apps.resource_uri(self.spec) is not None

    def exposed_spec(self) -> ToolDict:
        spec = self.spec if self.shown_uri is None else apps.with_resource_uri(self.spec, self.shown_uri)
        return {**spec, "name": self.exposed}


class Catalogue:
    def __init__(self, cache_file: Path | None = None, max_name_length: int = 64) -> None:
        self.cache_file = cache_file
        self.max_name_length = max_name_length
        self._server_tools: dict[str, list[ToolDict]] = {}
        self._from_cache: set[str] = set()
        self._servers: list[str] = []
        self._settings: Mapping[str, ToolSettings] = {}
        self._tools: list[CatalogueTool] = []
        self._by_exposed: dict[str, CatalogueTool] = {}
        self._shared_ui: frozenset[str] = frozenset()
        self.changed: Signal[int] = Signal("catalogue changed")  # the new generation
        self.generation = 0
        self.cache_problem: str | None = None  # why the cache file could not be read at start
        if cache_file is not None:
            cached, self.cache_problem = cache.read(cache_file)
            self._server_tools.update(cached)
            self._from_cache.update(self._server_tools)

    # Reading --------------------------------------------------------------------------------------

    def tools(self) -> list[CatalogueTool]:
        return list(self._tools)

    def get(self, exposed: str) -> CatalogueTool | None:
        return self._by_exposed.get(exposed)

    def find(self, server: str, name: str) -> CatalogueTool | None:
        return next((t for t in self._tools if t.server == server and t.name == name), None)

    def entries(self) -> list[ToolEntry]:
        """Every tool of every enabled server, in config order, enabled or not."""
        exposed = {(t.server, t.name): t.exposed for t in self._tools}
        found = []
        for server in self._servers:
            for spec in self._server_tools.get(server) or []:
                name = str(spec.get("name", ""))
                if name:
                    settings = self._settings.get(f"{server}:{name}") or ToolSettings()
                    cached = server in self._from_cache
                    found.append(ToolEntry(server, name, exposed.get((server, name)), spec, settings, cached))
        return found

    @property
    def servers(self) -> list[str]:
        """The enabled servers, in config order (also those whose tools are not known)."""
        return list(self._servers)

    def shared_ui_uris(self) -> frozenset[str]:
        """The `ui://` URIs tools of several servers name: shown qualified by server (`apps`)."""
        return self._shared_ui

    def served(self) -> dict[str, list[ToolDict]]:
        """Every server's tools as last served (listed in this run, or from the disk cache)."""
        return dict(self._server_tools)

    def server_tools(self, server: str) -> list[ToolDict] | None:
        return self._server_tools.get(server)

    def is_cached_only(self, server: str) -> bool:
        """True while a server's tools come from the disk cache, not from the running server."""
        return server in self._from_cache

    # Changing -------------------------------------------------------------------------------------

    def configure(self, servers: Iterable[str], settings: Mapping[str, ToolSettings]) -> None:
        """Which servers are enabled (in config order) and the per-tool settings."""
        self._servers = list(servers)
        self._settings = dict(settings)
        self._rebuild()

    def load(self, tools: Mapping[str, list[ToolDict]]) -> None:
        """Every server's tools at once, from elsewhere than the servers (a dump, for the CLI)."""
        self._server_tools.update({server: list(listed) for server, listed in tools.items()})
        self._rebuild()

    def set_tools(self, server: str, tools: list[ToolDict], save: bool = True) -> None:
        """A server's current tools; `save=False` leaves writing the cache to the caller (the engine
        coalesces a burst of servers into one write, off the event loop: see `cache_snapshot`)."""
        self._server_tools[server] = tools
        self._from_cache.discard(server)
        if save:
            self.write_cache(self.cache_snapshot())
        self._rebuild()

    def _rebuild(self) -> None:
        pairs: list[tuple[str, str, ToolDict, ToolSettings | None]] = []
        for server in self._servers:
            for spec in self._server_tools.get(server) or []:
                name = str(spec.get("name", ""))
                settings = self._settings.get(f"{server}:{name}")
                if name and not (settings and settings.disabled):
                    pairs.append((server, name, spec, settings))
        names = assign_exposed_names(((s, n) for s, n, _, _ in pairs), self.max_name_length)
        uis = {(s, n): uri for s, n, spec, _ in pairs if (uri := apps.resource_uri(spec)) is not None}
        shared = apps.shared_uris((s, uri) for (s, _), uri in uis.items())
        tools = [
            CatalogueTool(
                s,
                n,
                names[(s, n)],
                spec,
                bool(settings and settings.always_on),
                tuple(settings.aliases) if settings else (),
                dict(settings.params) if settings else {},
                apps.qualified(s, uis[(s, n)]) if uis.get((s, n)) in shared else None,
            )
            for s, n, spec, settings in pairs
        ]
        if tools == self._tools:
            return
        self._shared_ui = shared
        self._tools = tools
        self._by_exposed = {t.exposed: t for t in tools}
        self.generation += 1
        self.changed.emit(self.generation)

    # The disk cache -------------------------------------------------------------------------------

    def cache_snapshot(self) -> dict[str, Any]:
        """What the cache file holds now; safe to encode on another thread (tool lists are replaced
        as a whole, never changed in place)."""
        return cache.snapshot(self._server_tools)

    def write_cache(self, document: dict[str, Any]) -> None:
        if self.cache_file is not None:
            cache.write(self.cache_file, document)
