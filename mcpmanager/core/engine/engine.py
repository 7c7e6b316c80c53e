"""The engine: config → supervised downstream servers → catalogue → router. What a front end holds.

Front ends (the CLI's `serve`, the window) observe it through `events` (the servers' states and
tools, the catalogue, config changes, calls) and change it only through `Control`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from mcpmanager import __version__
from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.catalogue.offerings import Offerings, ServerOffers
from mcpmanager.core.catalogue.pins import PINS_FILE, Held, Pins
from mcpmanager.core.catalogue.pins_offers import held_prompt, held_templates_for
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.modes import MODES, Mode
from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.engine.advertisement import advertisement_path, remember_config, write_advertisement
from mcpmanager.core.engine.events import CatalogueChanged, ConfigApplied, ConfigRejected, EngineEvent, PinsChanged
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.suggestions import Suggestion, always_on_suggestions
from mcpmanager.core.search.semantic import CACHE_FILES, vector_cache
from mcpmanager.core.search.vector_cache import VectorCache
from mcpmanager.core.signals import Signal
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.eras import KnownEras
from mcpmanager.core.supervisor.events import (
    DownstreamEvent,
    OffersChanged,
    ResourceUpdated,
    TaskStatus,
    ToolDict,
    ToolsChanged,
)
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.process import Spawner, spawn_child
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.system.process_groups import ProcessGroups, reap_left_behind
from mcpmanager.core.system.watchdog import start_watchdog
from mcpmanager.core.tasks import spawn

logger = logging.getLogger(__name__)
SEARCH_VECTORS = CACHE_FILES["static"]  # tools' semantic vectors by text (core/search/vector_cache.py)
CACHE_SAVE_DELAY = 0.5  # seconds: servers that come up together share one cache write
CATALOGUE_FILE = "catalogue.json"  # every server's tools as last served, in the cache folder
LEARNED_FILE = "learned.json"  # (discover query → tool called) pairs, beside the catalogue cache
ADVERTISE_RETRY = 2.0  # seconds between tries to write the advertisement on a full disk

FrontEnd = Literal["serve", "gui", "background"]


@dataclass(frozen=True)
class Identity:
    """Who holds this engine, as `mcpmanager status` and a second `mcpmanager` read it."""

    front_end: FrontEnd = "serve"  # headless `serve`, the window, or the background engine `connect` started
    config_label: str | None = None  # what `status` shows as the config (None: the config file's path)
    token_file: Path | None = None  # the bearer token's file, when it serves HTTP


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


class Engine:
    def __init__(
        self,
        config: Config,
        paths: Paths,
        mode: Mode | None = None,
        identity: Identity = Identity(),
        spawner: Spawner | None = None,
    ) -> None:
        """`spawner` makes stdio servers' child processes (tests pass a fake one)."""
        self.config = config
        self.paths = paths
        # Its servers' process groups, on record so the next engine can end them should this one be
        # killed (`process_groups`).
        leftovers = [advertisement_path(paths.runtime_dir)]  # (the watchdog removes it: a killed engine's)
        self.groups = ProcessGroups(paths.runtime_dir, functools.partial(start_watchdog, leftovers=leftovers))
        self._spawner: Spawner = spawner or functools.partial(spawn_child, groups=self.groups)
        self.identity = identity
        self.catalogue = Catalogue(paths.cache_dir / CATALOGUE_FILE, config.proxy.max_name_length)
        self.offerings = Offerings(config.proxy.max_name_length)
        self._eras = KnownEras(paths.cache_dir / "eras.json")
        self.downstreams: dict[str, Downstream] = {}
        self.router = Router(
            self.catalogue, self.downstreams, mode or config.proxy.mode, config.synonyms, self.offerings
        )
        self.router.use_search_vectors(self._search_vectors(config), config.proxy.semantic_model)
        self.endpoint = "stdio"  # or the default mode's URL once serving HTTP (`listening`)
        self.local_socket: Path | None = None  # where `connect` reaches it, once listening there
        self.events: Signal[EngineEvent] = Signal("engine events")
        self._refresh_pending = False
        self._advertise_pending = False
        self._advertise_failed = False
        # The last config change that was refused (cleared when one is applied): `status` shows it,
        # not only the engine's stderr, which nobody reads when a client started the engine.
        self.config_error: str | None = None
        # Tool pinning: approved definitions beside the config; the tools held now, by server.
        self.pins = Pins(paths.config_file.with_name(PINS_FILE))
        self.pins.baseline(self.catalogue.served())  # a damaged file: what was served last stands in
        self.held: dict[str, list[Held]] = {}  # by server: its held tools, prompts and templates
        self._offered: dict[str, ServerOffers] = {}  # each server's prompts and templates as listed, held or not
        self.router.withheld = self.withheld
        self.router.passthrough.held_prompt = lambda name: held_prompt(self.held_tools(), name)
        self.router.passthrough.held_templates = lambda uri: held_templates_for(self.held_tools(), uri)
        self.router.learning.store.path = paths.cache_dir / LEARNED_FILE  # read in `start`
        self.router.learning.store.changed.connect(self._learned_changed)
        self.router.learning.enabled = config.proxy.learn_from_use
        self.router.approvals.config = lambda: self.config  # asking before calls follows the config
        self._started = time.time()
        self._applying = asyncio.Lock()
        self._save_pending = False
        self.catalogue.changed.connect(self._catalogue_changed)
        self.offerings.changed.connect(self._offerings_changed)
        self.router.activity.changed.connect(self.events.emit)

    # Lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every enabled server at once; returns immediately (servers come up in the background)."""
        self.paths.ensure()
        await asyncio.to_thread(reap_left_behind, self.paths.runtime_dir)  # what a killed engine left
        self.router.learning.store.load()
        enabled = [s.name for s in self.config.servers.values() if not s.disabled]
        self.catalogue.configure(enabled, self.config.tools)
        # The cached catalogue's search vectors (from disk, or computed), off the event loop.
        spawn(asyncio.to_thread(self.router.discovery.vector_job()), name="search vectors")
        self.offerings.configure(enabled)
        self.router.reset_notified()
        for server in self.config.servers.values():
            self._run(server)
        if self.identity.config_label is None:  # a real config file, not the bundled demo
            remember_config(self.paths.runtime_dir, self.paths.config_file)
        self._advertise()

    async def apply_config(self, config: Config) -> None:
        """Take a changed config while running: start, stop or restart only the servers that changed,
        and re-expose tools when tool settings changed (clients are notified if what they see moved).
        One change at a time: the file watcher also sees what the window saved."""
        async with self._applying:
            await self._apply_config(config)

    async def _apply_config(self, config: Config) -> None:
        old = self.config
        self.config = config
        self.config_error = None
        for name in old.servers.keys() - config.servers.keys():
            downstream = self.downstreams.pop(name)
            await downstream.stop()
            downstream.log.close()
            self.offerings.forget(name)
            self._offered.pop(name, None)
            self.held.pop(name, None)
        for name, server in config.servers.items():
            current = self.downstreams.get(name)
            if current is not None and current.config == server:
                continue
            if current is not None:
                await current.stop()
                current.log.close()
            self._run(server)
        if config.synonyms != old.synonyms:
            self.router.use_synonyms(config.synonyms)
        semantic = (config.proxy.semantic_search, config.proxy.semantic_model)
        if semantic != (old.proxy.semantic_search, old.proxy.semantic_model):
            self.router.use_search_vectors(self._search_vectors(config), config.proxy.semantic_model)
            spawn(asyncio.to_thread(self.router.discovery.vector_job()), name="search vectors")
        self.router.learning.enabled = config.proxy.learn_from_use
        if config.proxy.new_tools != old.proxy.new_tools:
            self._review_all()  # new tools held now, or let through
        enabled = [s.name for s in config.servers.values() if not s.disabled]
        self.catalogue.configure(enabled, config.tools)
        self.offerings.configure(enabled)
        self._advertise()
        self.events.emit(ConfigApplied(tuple(config.servers)))

    def _run(self, server: ServerConfig) -> None:
        settings, log_dir = self.config.supervisor, self.paths.log_dir
        downstream = Downstream(
            server,
            settings,
            log_dir,
            self._on_downstream,
            spawner=self._spawner,
            asks=self.router.asks,
            eras=self._eras,
        )
        self.downstreams[server.name] = downstream
        if server.disabled:
            self.offerings.forget(server.name)  # what it offered is not offered any more
            self._offered.pop(server.name, None)
            downstream.disable()
        else:
            downstream.start()

    async def watch_config(self, interval: float = 1.0) -> None:
        """Follow the config file: a valid change is applied, a broken one is reported and ignored.

        A file that is gone is "no change yet", never "no servers": editors that save by deleting and
        creating anew, and sync tools, remove it for a moment, and the running setup stays until it
        is back."""
        path = self.paths.config_file
        seen = _stamp(path)
        pins_path, pins_seen = self.pins.path, _stamp(self.pins.path) if self.pins.path else None
        while True:
            await asyncio.sleep(interval)
            if pins_path is not None and (pins_stamp := _stamp(pins_path)) != pins_seen:
                pins_seen = pins_stamp
                self._pins_changed()
            stamp = _stamp(path)
            if stamp == seen:
                continue
            seen = stamp
            if stamp is None:
                logger.warning("the config file %s is gone; the running setup stays until it is back", path)
                continue
            try:
                config = await asyncio.to_thread(load_config, path)
            except ConfigError as exc:
                logger.error("config change ignored, the running setup stays: %s", exc)
                self.config_error = str(exc)
                self._advertise()
                self.events.emit(ConfigRejected(str(exc)))
                continue
            logger.info("config changed; applying")
            await self.apply_config(config)

    async def stop(self) -> None:
        await asyncio.gather(*(d.stop() for d in self.downstreams.values()))
        self.catalogue.write_cache(self.catalogue.cache_snapshot())  # the next start answers from it
        self.router.learning.store.save()  # a write still waiting would be lost with the loop
        for downstream in self.downstreams.values():
            downstream.log.close()
        advertisement_path(self.paths.runtime_dir).unlink(missing_ok=True)
        await asyncio.to_thread(self.groups.close)  # (after the ladder: the watchdog has nothing to end)

    async def wait_settled(self, timeout: float) -> bool:
        """Wait until no server is starting (all ready, failed or backing off); True if they settled."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(d.status.state is not State.STARTING for d in self.downstreams.values()):
                return True
            await asyncio.sleep(0.05)
        return False

    # Events ---------------------------------------------------------------------------------------

    def _on_downstream(self, event: DownstreamEvent) -> None:
        if isinstance(event, ToolsChanged):
            self._review(event.server, event.tools)
        elif isinstance(event, OffersChanged):
            self._offered[event.server] = ServerOffers(
                tuple(event.prompts), tuple(event.resources), tuple(event.templates)
            )
            self._review_offers(event.server)
        elif isinstance(event, ResourceUpdated):
            spawn(self.router.resource_updated(event.uri), name="resource-updated")
        elif isinstance(event, TaskStatus):
            spawn(self.router.tasks.heard(event.server, event.snapshot), name="task-status")

        self._schedule_advertise()  # the advertisement carries states and tool counts
        self.events.emit(event)

    def _review(self, server: str, tools: list[ToolDict]) -> None:
        """Serve a server's tools but those whose definition changed since approved (`pins`)."""
        allowed, held = self.pins.review(server, tools, self.config.proxy.new_tools)
        if held:
            logger.warning("%s: %d tool(s) changed or new since approved and are held: %s", server, len(held),
                           ", ".join(h.tool for h in held))  # fmt: skip
        self.held[server] = held + [h for h in self.held.get(server, []) if h.kind != "tool"]
        self.catalogue.set_tools(server, allowed, save=False)
        self._schedule_cache_save()

    def _review_offers(self, server: str) -> None:
        """Offer a server's prompts and templates but those whose definition changed since approved."""
        offered, new = self._offered[server], self.config.proxy.new_tools
        prompts, held_prompts = self.pins.review(server, offered.prompts, new, "prompt")
        templates, held_templates = self.pins.review(server, offered.templates, new, "template")
        held = held_prompts + held_templates
        if held:
            logger.warning("%s: %d prompt(s) or template(s) changed or new since approved and are held: %s",
                           server, len(held), ", ".join(h.key for h in held))  # fmt: skip
        self.held[server] = [h for h in self.held.get(server, []) if h.kind == "tool"] + held
        self.offerings.set_offers(server, ServerOffers(tuple(prompts), offered.resources, tuple(templates)))

    def _pins_changed(self) -> None:
        """`pins.json` changed (an approval, a repair, a reset): review every running server's tools again."""
        self.pins.load()
        self.pins.baseline(self.catalogue.served())  # damaged now: servers it had no pins for yet
        self._review_all()
        self.events.emit(PinsChanged(self.pins.damaged))

    def _review_all(self) -> None:
        for name, downstream in self.downstreams.items():
            if downstream.tools is not None:
                self._review(name, downstream.tools)
            if name in self._offered:
                self._review_offers(name)
        self._advertise()

    def held_tools(self) -> list[Held]:
        """The tools, prompts and templates held now, of the servers that run (a disabled server's are
        not served anyway)."""
        return [h for name, d in self.downstreams.items() if not d.config.disabled for h in self.held.get(name, [])]

    def damaged_files(self) -> list[dict[str, str]]:
        """The state files that cannot be read and what that does (`status`, the window's banner)."""
        if self.pins.damaged is None:
            return []
        effect = (
            "tools that differ from those served last, and prompts and templates not seen since the engine "
            "started, are held; approving fails until it is repaired or reset"
        )
        if self.catalogue.cache_problem is not None:  # nothing was served last, as far as the engine knows
            effect = (f"the catalogue cache {self.catalogue.cache_file} could not be read either "
                      f"({self.catalogue.cache_problem}), so every tool is held; approving fails until "
                      "it is repaired or reset")  # fmt: skip
        return [{"file": str(self.pins.path), "reason": self.pins.damaged, "effect": effect}]

    def approve(self, held: list[dict[str, Any]]) -> list[str]:
        """Approve held tools (as `Held.describe` gives them) as `mcpmanager pins approve` does: their
        new definitions recorded in the pins file, checked against the fingerprints reported; served
        again at once. ValueError if a definition does not match its fingerprint, PinsDamaged (a
        ValueError) while the pins file cannot be read."""
        self.pins.load()  # the file as it is now: an approval made meanwhile by the command is kept
        names = self.pins.approve(held)
        self._review_all()  # not from the file again: on a full disk the approval holds for this run
        return names

    def withheld(self, called: str) -> str | None:
        """Why a name that resolves to nothing is a held tool's, or None."""
        for held in (h for tools in self.held.values() for h in tools if h.kind == "tool"):
            if called in (held.tool, f"{held.server}__{held.tool}", f"{held.server}:{held.tool}"):
                return held.refusal()
        return None

    def _search_vectors(self, config: Config) -> VectorCache | None:
        """The semantic side of search, its vectors cached beside the catalogue's (None: turned off)."""
        if not config.proxy.semantic_search:
            return None
        model = config.proxy.semantic_model  # each model's vectors in a file of its own
        return vector_cache(model, self.paths.cache_dir / CACHE_FILES[model])

    def _schedule_cache_save(self) -> None:
        """One cache write for a burst of servers listing their tools, encoded and written off the
        event loop (a window must not freeze while 27 servers come up)."""
        if not self._save_pending:
            self._save_pending = True
            spawn(self._save_cache_soon(), name="catalogue cache")

    async def _save_cache_soon(self) -> None:
        await asyncio.sleep(CACHE_SAVE_DELAY)
        self._save_pending = False
        await asyncio.to_thread(self.catalogue.write_cache, self.catalogue.cache_snapshot())
        await asyncio.to_thread(self.router.discovery.vector_job())  # search vectors, off the loop

    def _catalogue_changed(self, generation: int) -> None:
        self.events.emit(CatalogueChanged(len(self.catalogue.tools())))
        if not self._refresh_pending:
            self._refresh_pending = True
            spawn(self._refresh(), name="proxy-refresh")

    def _offerings_changed(self, kinds: frozenset[str]) -> None:
        spawn(self.router.offers_changed(kinds), name="offers-changed")

    async def _refresh(self) -> None:
        await asyncio.sleep(0)  # coalesce a burst of changes into one notification
        self._refresh_pending = False
        await self.router.refresh()

    # Advertisement (for `mcpmanager status`) ------------------------------------------------------

    def suggestions(self) -> list[Suggestion]:
        """Tools called often through discovery, not always-on yet, with what listing them costs."""
        return always_on_suggestions(self.catalogue, self.router.learning.store)

    def _learned_changed(self, _: None) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a command): nothing advertises
            return
        self._schedule_advertise()  # the advertisement carries the always-on suggestions

    def _schedule_advertise(self) -> None:
        if not self._advertise_pending:
            self._advertise_pending = True
            asyncio.get_running_loop().call_later(0.1, self._advertise)

    def adopt_config_file(self) -> None:
        """The config this engine runs is the config file's from now on (the demo was kept or replaced)."""
        if self.identity.config_label is not None:
            self.identity = replace(self.identity, config_label=None)
            remember_config(self.paths.runtime_dir, self.paths.config_file)
            self._advertise()

    def listening(self, url: str) -> None:
        """The endpoint is up at `url` (the default mode's): say so where `status` and clients look."""
        self.endpoint = url
        self._advertise()

    def listening_locally(self, path: Path | None) -> None:
        """`connect` reaches the engine at the Unix socket `path` (None: no longer)."""
        self.local_socket = path
        self._advertise()

    def _advertise(self) -> None:
        self._advertise_pending = False
        try:
            write_advertisement(self.paths.runtime_dir, self.describe())
        except OSError as exc:
            # A full disk: `status` and `connect` read a stale file (or none) until it is written;
            # try again soon, and say so once, not on every state change.
            if not self._advertise_failed:
                logger.warning("cannot write the runtime advertisement (will retry): %s", exc)
            self._advertise_failed = True
            if not self._advertise_pending:
                self._advertise_pending = True
                asyncio.get_running_loop().call_later(ADVERTISE_RETRY, self._advertise)
            return
        if self._advertise_failed:
            logger.info("the runtime advertisement is written again")
            self._advertise_failed = False

    def describe(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "endpoint": self.endpoint,
            "urls": {m: f"{self.endpoint}/{m}" for m in MODES} if self.endpoint.startswith("http") else {},
            "socket": str(self.local_socket) if self.local_socket else None,
            "token_file": str(token_file) if (token_file := self.identity.token_file) else None,
            "front_end": self.identity.front_end,
            "mode": self.router.mode,
            "config": self.identity.config_label or str(self.paths.config_file),
            "config_error": self.config_error,
            "damaged": self.damaged_files(),  # state files that cannot be read: never believed, never hidden
            "started": self._started,
            "tools": len(self.catalogue.tools()),
            "learned": len(self.router.learning.store),  # (query → tool) pairs learned from use
            "suggested_always_on": [s.describe() for s in self.suggestions()],
            "servers": {
                name: {
                    "state": d.status.state.value,
                    "reason": d.status.reason,
                    "retry_in": d.status.retry_in,
                    "restarts": d.status.restarts,
                    "last_exit": d.last_exit,  # why it last crashed: `status` shows it while it restarts
                    "pid": d.process.pid if d.process else None,
                    "tools": len(d.tools) if d.tools is not None else None,
                    "prompts": len(offers.prompts) if (offers := self.offerings.server_offers(name)) else None,
                    "resources": len(offers.resources) if offers else None,
                    "templates": len(offers.templates) if offers else None,
                    "protocol": d.protocol_version,
                    "log": str(d.log.path) if d.log.path else None,
                    "logs": d.log.trouble,  # why its log file cannot be written (a full disk), if so
                    "held": [h.describe() for h in self.held.get(name, [])],  # changed tools, withheld
                }
                for name, d in self.downstreams.items()
            },
        }
