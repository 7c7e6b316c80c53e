"""What a user changes in a running engine (the manager's window does it through here).

Every change is a function of the config file as it is on disk now, made under the config's lock
(`core/config/shared.py`: our other writers wait their turn) and saved atomically with one backup
only if the file is still what was read; else it is read again and the change made again, so an
edit made in another program meanwhile is kept, not overwritten. It is then applied to the running
engine, so only what changed restarts and connected clients hear of what they see. A file that no
longer loads is never overwritten: the change is refused with the file's own error. Starting,
stopping and restarting a server are for this run only and touch no file.

Every change to the config file goes through here: the window's, and the command line's `import`
and `secrets move` (which have no engine in their process: they only save, and a running engine
follows the file).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mcpmanager.core.clients.importing import Added, Skipped, merge
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.names import SERVER_NAME
from mcpmanager.core.config.rebase import rebase_server
from mcpmanager.core.config.save import ConfigChanged, save_config
from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.config.settings import Approval, ToolSettings
from mcpmanager.core.config.shared import LOCK_TIMEOUT, ConfigBusy, ConfigLock, read_snapshot
from mcpmanager.core.config.to_keyring import Move, scrub_backup, still_there, with_references

if TYPE_CHECKING:  # the CLI's commands edit the config through Control without an engine: no SDK to load
    from mcpmanager.core.engine.engine import Engine
    from mcpmanager.core.supervisor.downstream import Downstream

_ALIAS = re.compile(r"^\S+$")
ATTEMPTS = 5  # reads and saves of one change while other programs keep saving the file

Change = Callable[[Config], Config | None]  # the file's config -> the changed one (None: nothing to save)


class ControlError(ValueError):
    """A change that was not made; str() says why in one line a user can act on."""


class Control:
    def __init__(self, path: Path, engine: Engine | None = None, lock_timeout: float = LOCK_TIMEOUT) -> None:
        """Changes to the config file at `path`, applied to `engine` when one runs in this process."""
        self.path = path
        self.engine = engine
        self.lock_timeout = lock_timeout
        self._lock = asyncio.Lock()

    # Tools ----------------------------------------------------------------------------------------

    async def set_tool(
        self,
        key: str,
        *,
        always_on: bool | None = None,
        disabled: bool | None = None,
        aliases: Iterable[str] | None = None,
        params: Mapping[str, str] | None = None,
        approval: Approval | Literal["default"] | None = None,
    ) -> None:
        """Change one tool's settings (`key` is `server:tool`); what is not given stays (`approval`
        "default": none of its own, `proxy.askBefore` decides)."""

        def change(config: Config) -> Config:
            settings = config.tools.get(key, ToolSettings())
            if always_on is not None:
                settings = replace(settings, always_on=always_on)
            if disabled is not None:
                settings = replace(settings, disabled=disabled)
            if aliases is not None:
                settings = replace(settings, aliases=self._aliases(key, aliases))
            if params is not None:
                settings = replace(settings, params=self._params(key, params))
            if approval is not None:
                settings = replace(settings, approval=None if approval == "default" else approval)
            return config.with_tool_settings(key, settings)

        await self._edit(change)

    def _aliases(self, key: str, aliases: Iterable[str]) -> list[str]:
        found: list[str] = []
        for alias in (a.strip() for a in aliases):
            if not alias or alias in found:
                continue
            if not _ALIAS.match(alias):
                raise ControlError(f"alias {alias!r}: a tool name has no spaces")
            other = self.engine.catalogue.get(alias) if self.engine else None
            if other is not None and other.key != key:
                raise ControlError(f"alias {alias!r} is already the name of {other.key}; it would never be used")
            found.append(alias)
        return found

    def _params(self, key: str, params: Mapping[str, str]) -> dict[str, str]:
        server, _, name = key.partition(":")
        tool = self.engine.catalogue.find(server, name) if self.engine else None
        schema = tool.spec.get("inputSchema") if tool else None
        declared = schema.get("properties") if isinstance(schema, dict) else None
        checked: dict[str, str] = {}
        for alias, target in params.items():
            alias, target = alias.strip(), target.strip()
            if not alias or not target:
                raise ControlError("a parameter alias needs both the name a model passes and the parameter it means")
            if isinstance(declared, dict) and target not in declared:
                known = ", ".join(declared) or "none"
                raise ControlError(f"{name} has no parameter {target!r} (its parameters: {known})")
            if isinstance(declared, dict) and alias in declared:
                raise ControlError(f"{alias!r} is already a parameter of {name}; an alias for it would never apply")
            checked[alias] = target
        return checked

    # Servers --------------------------------------------------------------------------------------

    async def put_server(
        self, server: ServerConfig, replacing: str | None = None, base: ServerConfig | None = None
    ) -> None:
        """Add `server`, or replace the one named `replacing` in its place (a rename carries its
        tool settings along). `base`: the server `server` was edited from (the window's form); what
        the edit left as it was is taken from the file now (`rebase_server`)."""
        _check_name(server.name)
        edited = server

        def change(config: Config) -> Config:
            server = edited
            if base is not None and replacing is not None and replacing in config.servers:
                server = rebase_server(base, edited, config.servers[replacing])
            if server.name != replacing and server.name in config.servers:
                raise ControlError(f"a server named {server.name!r} exists already")
            if replacing is not None and replacing not in config.servers:
                raise ControlError(f"no server named {replacing!r} in {self.path.name}")
            servers: dict[str, ServerConfig] = {}
            for name, existing in config.servers.items():
                servers[server.name if name == replacing else name] = server if name == replacing else existing
            if replacing is None:
                servers[server.name] = server
            tools = dict(config.tools)
            if replacing is not None and replacing != server.name:
                prefix = f"{replacing}:"
                tools = {
                    (f"{server.name}:{k[len(prefix) :]}" if k.startswith(prefix) else k): v for k, v in tools.items()
                }
            return config.with_servers(servers, tools)

        await self._edit(change)

    async def add_alias(self, key: str, alias: str) -> None:
        """Give a tool one more alias, on top of those in the file now (not a stale copy of them)."""

        def change(config: Config) -> Config:
            settings = config.tools.get(key, ToolSettings())
            aliases = self._aliases(key, [*settings.aliases, alias])
            return config.with_tool_settings(key, replace(settings, aliases=aliases))

        await self._edit(change)

    async def import_servers(self, servers: Iterable[tuple[ServerConfig, Path]]) -> tuple[list[Added], list[Skipped]]:
        """Add servers read from clients' configs (each with the file it came from), by the import rule:
        one identical to a server mcpmanager has is skipped, a taken name gets `-2`, `-3`…
        With no config file yet (the demo), they start the user's config instead of joining the demo."""
        servers = list(servers)
        for server, _ in servers:
            _check_name(server.name)
        outcome: tuple[list[Added], list[Skipped]] = ([], [])

        def change(config: Config) -> Config | None:
            nonlocal outcome
            merged, added, skipped = merge(config, servers)
            outcome = (added, skipped)  # of the last read: the one saved
            return merged if added else None

        await self._edit(change, missing=Config())
        return outcome

    async def move_secrets(self, name: str, moves: Sequence[Move]) -> list[Move]:
        """Put references in place of the values `moves` took to the keyring, in server `name` as it
        is in the file now, and scrub the backup; a value changed meanwhile stays as it is now. The
        moves made."""
        made: list[Move] = []

        def change(config: Config) -> Config | None:
            nonlocal made
            server = config.servers.get(name)
            if server is None:
                raise ControlError(f"no server named {name!r} in {self.path.name} any more")
            made = still_there(server, moves)
            return config.with_server(with_references(server, made)) if made else None

        await self._edit(change, after=lambda: scrub_backup(self.path, list(moves)))
        return made

    async def scrub_backup(self, moves: Sequence[Move]) -> None:
        """Put the references of values moved to the keyring in the config's backup too."""
        async with self._lock, self._file_lock():
            await asyncio.to_thread(scrub_backup, self.path, list(moves))

    async def keep(self) -> None:
        """Write the running config to the file (the demo's servers become the user's own)."""
        await self._edit(lambda config: config)

    async def remove_server(self, name: str) -> None:
        """Remove a server; its tool settings stay in the file for when it comes back."""

        def change(config: Config) -> Config:
            if name not in config.servers:
                raise ControlError(f"no server named {name!r} in {self.path.name}")
            return config.without_server(name)

        await self._edit(change)

    async def set_enabled(self, name: str, enabled: bool) -> None:
        def change(config: Config) -> Config:
            server = config.servers.get(name)
            if server is None:
                raise ControlError(f"no server named {name!r} in {self.path.name}")
            return config.with_server(replace(server, disabled=not enabled))

        await self._edit(change)

    # This run only ---------------------------------------------------------------------------------

    async def start(self, name: str) -> None:
        downstream = self._downstream(name)
        if downstream.config.disabled:
            raise ControlError(f"{name} is disabled; enable it to start it")
        downstream.start()

    async def stop(self, name: str) -> None:
        await self._downstream(name).stop()

    async def restart(self, name: str) -> None:
        downstream = self._downstream(name)
        if downstream.config.disabled:
            raise ControlError(f"{name} is disabled; enable it to start it")
        await downstream.restart()

    def _downstream(self, name: str) -> Downstream:
        downstream = self.engine.downstreams.get(name) if self.engine else None
        if downstream is None:
            raise ControlError(f"no server named {name!r} is running")
        return downstream

    # Applying -------------------------------------------------------------------------------------

    def current(self) -> Config:
        """The config as it is on disk now; the running one when there is no file yet (the demo).
        ControlError when the file does not load."""
        if not self.path.exists():
            return self.engine.config if self.engine else Config()
        try:
            return load_config(self.path)
        except ConfigError as exc:
            raise ControlError(f"{exc} (fix the file first; it was left as it is)") from exc

    async def _edit(
        self, change: Change, *, missing: Config | None = None, after: Callable[[], None] | None = None
    ) -> None:
        """Make `change` to the file as it is on disk, under the config's lock, and save it if the file
        is still what was read; else read again and make it again (`change` may run more than once).
        `missing`: what a file not there yet is (default: the running config, the demo). `after`:
        done under the lock once saved (the backup scrubbed)."""
        async with self._lock:
            async with self._file_lock():
                config = await self._save(change, missing, after)
            if config is not None and self.engine is not None:
                self.engine.adopt_config_file()  # the demo, if it ran, is the user's config now
                await self.engine.apply_config(config)

    async def _save(self, change: Change, missing: Config | None, after: Callable[[], None] | None) -> Config | None:
        for _ in range(ATTEMPTS):
            try:
                snapshot = await asyncio.to_thread(read_snapshot, self.path)
            except ConfigError as exc:
                raise ControlError(f"{exc} (fix the file first; it was left as it is)") from exc
            read = snapshot.config
            if read is None:  # no file yet
                read = missing if missing is not None else (self.engine.config if self.engine else Config())
            changed = change(read)
            if changed is None:
                return None
            try:
                await asyncio.to_thread(save_config, changed, self.path, read=snapshot.data)
            except ConfigChanged:
                continue  # another program saved it since our read: its change is kept, ours made again
            except OSError as exc:
                raise ControlError(f"cannot save {self.path}: {exc.strerror or exc}") from exc
            if after is not None:
                await asyncio.to_thread(after)
            return changed
        raise ControlError(f"{self.path.name} kept changing while it was saved ({ATTEMPTS} times); nothing was saved")

    @contextlib.asynccontextmanager
    async def _file_lock(self) -> AsyncIterator[None]:
        try:
            lock = ConfigLock(self.path, self.lock_timeout)
            await lock.__aenter__()
        except ConfigBusy as exc:
            raise ControlError(str(exc)) from None
        except OSError as exc:
            raise ControlError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
        try:
            yield
        finally:
            await lock.__aexit__(None, None, None)


def _check_name(name: str) -> None:
    if not SERVER_NAME.match(name):
        raise ControlError(
            f"server name {name!r}: use letters, digits, '-', '_' or '.', starting with a letter or digit"
        )
