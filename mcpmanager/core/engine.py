"""The engine: config → supervised downstream servers → catalogue → proxy. What a front end holds.

Front ends (the CLI's `serve`, the GUI) observe it through `subscribe`: they get the downstream
events (status and tool changes) and never reach into its parts to change them directly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpmanager import __version__
from mcpmanager.core.activity import CallRecord
from mcpmanager.core.catalogue import Catalogue
from mcpmanager.core.config import Config, ConfigError, load_config
from mcpmanager.core.discovery import Discovery
from mcpmanager.core.downstream import Downstream, DownstreamEvent, ToolsChanged
from mcpmanager.core.faces import Mode
from mcpmanager.core.paths import Paths
from mcpmanager.core.proxy import Proxy
from mcpmanager.core.runtime import write_advertisement
from mcpmanager.core.search.index import SearchIndex
from mcpmanager.core.states import State
from mcpmanager.core.tasks import spawn

logger = logging.getLogger(__name__)
CACHE_SAVE_DELAY = 0.5  # seconds: servers that come up together share one cache write


@dataclass(frozen=True)
class CatalogueChanged:
    tool_count: int


@dataclass(frozen=True)
class ConfigRejected:
    reason: str


@dataclass(frozen=True)
class ConfigApplied:
    """A changed config is in effect: servers may have come, gone or been replaced."""

    servers: tuple[str, ...]


EngineEvent = DownstreamEvent | CatalogueChanged | ConfigRejected | ConfigApplied | CallRecord


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


class Engine:
    def __init__(self, config: Config, paths: Paths, mode: Mode | None = None) -> None:
        self.config = config
        self.paths = paths
        self.catalogue = Catalogue(paths.cache_dir / "catalogue.json", config.proxy.max_name_length)
        self.downstreams: dict[str, Downstream] = {}
        index = SearchIndex(config.synonyms)
        self.proxy = Proxy(self.catalogue, self.downstreams, mode or config.proxy.mode, index)
        self.endpoint = "stdio"  # or the default mode's URL once serving HTTP
        self.token_file: Path | None = None  # the bearer token's file, when serving HTTP
        self.front_end = "serve"  # what holds this engine: "serve" (headless) or "gui"
        self.config_label = str(paths.config_file)  # what `status` shows as the config
        self._listeners: list[Callable[[EngineEvent], None]] = []
        self._refresh_pending = False
        self._advertise_pending = False
        self._started = time.time()
        self._applying = asyncio.Lock()
        self._save_pending = False
        self.catalogue.subscribe(self._catalogue_changed)
        self.proxy.activity.subscribe(self._emit)

    def subscribe(self, listener: Callable[[EngineEvent], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # Lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every enabled server at once; returns immediately (servers come up in the background)."""
        self.paths.ensure()
        enabled = [s.name for s in self.config.servers.values() if not s.disabled]
        self.catalogue.configure(enabled, self.config.tools)
        self.proxy.reset_notified()
        for server in self.config.servers.values():
            downstream = Downstream(server, self.config.supervisor, self.paths.log_dir, self._on_downstream)
            self.downstreams[server.name] = downstream
            if server.disabled:
                downstream.disable()
            else:
                downstream.start()
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
        for name in old.servers.keys() - config.servers.keys():
            downstream = self.downstreams.pop(name)
            await downstream.stop()
            downstream.log.close()
        for name, server in config.servers.items():
            current = self.downstreams.get(name)
            if current is not None and current.config == server:
                continue
            if current is not None:
                await current.stop()
                current.log.close()
            downstream = Downstream(server, config.supervisor, self.paths.log_dir, self._on_downstream)
            self.downstreams[name] = downstream
            if server.disabled:
                downstream.disable()
            else:
                downstream.start()
        if config.synonyms != old.synonyms:
            self.proxy.discovery = Discovery(self.catalogue, SearchIndex(config.synonyms))
        self.catalogue.configure([s.name for s in config.servers.values() if not s.disabled], config.tools)
        self._advertise()
        self._emit(ConfigApplied(tuple(config.servers)))

    async def watch_config(self, interval: float = 1.0) -> None:
        """Follow the config file: a valid change is applied, a broken one is reported and ignored."""
        path = self.paths.config_file
        seen = _stamp(path)
        while True:
            await asyncio.sleep(interval)
            stamp = _stamp(path)
            if stamp == seen:
                continue
            seen = stamp
            try:
                config = await asyncio.to_thread(load_config, path)
            except ConfigError as exc:
                logger.error("config change ignored, the running setup stays: %s", exc)
                self._emit(ConfigRejected(str(exc)))
                continue
            logger.info("config changed; applying")
            await self.apply_config(config)

    async def stop(self) -> None:
        await asyncio.gather(*(d.stop() for d in self.downstreams.values()))
        self.catalogue.write_cache(self.catalogue.cache_snapshot())  # the next start answers from it
        for downstream in self.downstreams.values():
            downstream.log.close()
        path = self.paths.runtime_dir / "engines" / f"{os.getpid()}.json"
        path.unlink(missing_ok=True)

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
            self.catalogue.set_tools(event.server, event.tools, save=False)
            self._schedule_cache_save()
        self._schedule_advertise()  # the advertisement carries states and tool counts
        self._emit(event)

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

    def _catalogue_changed(self) -> None:
        self._emit(CatalogueChanged(len(self.catalogue.tools())))
        if not self._refresh_pending:
            self._refresh_pending = True
            spawn(self._refresh(), name="proxy-refresh")

    async def _refresh(self) -> None:
        await asyncio.sleep(0)  # coalesce a burst of changes into one notification
        self._refresh_pending = False
        await self.proxy.refresh()

    def _emit(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # an observer's bug must not stop the engine
                logger.exception("engine listener failed")

    # Advertisement (for `mcpmanager status`) ------------------------------------------------------

    def _schedule_advertise(self) -> None:
        if not self._advertise_pending:
            self._advertise_pending = True
            asyncio.get_running_loop().call_later(0.1, self._advertise)

    def refresh_advertisement(self) -> None:
        self._advertise()

    def _advertise(self) -> None:
        self._advertise_pending = False
        try:
            write_advertisement(self.paths.runtime_dir, self.describe())
        except OSError as exc:
            logger.warning("cannot write the runtime advertisement: %s", exc)

    def describe(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "endpoint": self.endpoint,
            "urls": {m: f"{self.endpoint}/{m}" for m in ("discovery", "direct")} if self.token_file else {},
            "token_file": str(self.token_file) if self.token_file else None,
            "front_end": self.front_end,
            "mode": self.proxy.mode,
            "config": self.config_label,
            "started": self._started,
            "tools": len(self.catalogue.tools()),
            "servers": {
                name: {
                    "state": d.status.state.value,
                    "reason": d.status.reason,
                    "retry_in": d.status.retry_in,
                    "restarts": d.status.restarts,
                    "pid": d.process.pid if d.process else None,
                    "tools": len(d.tools) if d.tools is not None else None,
                    "protocol": d.protocol_version,
                    "log": str(d.log.path) if d.log.path else None,
                }
                for name, d in self.downstreams.items()
            },
        }
