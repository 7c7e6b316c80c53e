"""What a user changes in a running engine (the manager's window does it through here).

Every change is made to the config file as it is on disk now (an edit made in another editor meanwhile
is kept, not overwritten), saved atomically with one backup, and applied to the running engine, so
only what changed restarts and connected clients hear of what they see. A file that no longer loads
is never overwritten: the change is refused with the file's own error. Starting, stopping and
restarting a server are for this run only and touch no file.

Every change to the config file goes through here: the window's, and the command line's `import`
(which has no engine in its process: it only saves, and a running engine follows the file).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mcpmanager.core.clients.importing import Added, Skipped, merge
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.names import SERVER_NAME
from mcpmanager.core.config.save import save_config
from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.config.settings import Approval, ToolSettings

if TYPE_CHECKING:  # the CLI's commands edit the config through Control without an engine: no SDK to load
    from mcpmanager.core.engine.engine import Engine
    from mcpmanager.core.supervisor.downstream import Downstream

_ALIAS = re.compile(r"^\S+$")


class ControlError(ValueError):
    """A change that was not made; str() says why in one line a user can act on."""


class Control:
    def __init__(self, path: Path, engine: Engine | None = None) -> None:
        """Changes to the config file at `path`, applied to `engine` when one runs in this process."""
        self.path = path
        self.engine = engine
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
        async with self._lock:
            config = self.current()
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
            await self._commit(config.with_tool_settings(key, settings))

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

    async def put_server(self, server: ServerConfig, replacing: str | None = None) -> None:
        """Add `server`, or replace the one named `replacing` in its place (a rename carries its
        tool settings along)."""
        _check_name(server.name)
        async with self._lock:
            config = self.current()
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
            await self._commit(config.with_servers(servers, tools))

    async def add_alias(self, key: str, alias: str) -> None:
        """Give a tool one more alias, on top of those in the file now (not a stale copy of them)."""
        async with self._lock:
            config = self.current()
            settings = config.tools.get(key, ToolSettings())
            aliases = self._aliases(key, [*settings.aliases, alias])
            await self._commit(config.with_tool_settings(key, replace(settings, aliases=aliases)))

    async def import_servers(self, servers: Iterable[tuple[ServerConfig, Path]]) -> tuple[list[Added], list[Skipped]]:
        """Add servers read from clients' configs (each with the file it came from), by the import rule:
        one identical to a server mcpmanager has is skipped, a taken name gets `-2`, `-3`…
        With no config file yet (the demo), they start the user's config instead of joining the demo."""
        servers = list(servers)
        for server, _ in servers:
            _check_name(server.name)
        async with self._lock:
            config = self.current() if self.path.exists() else Config()
            merged, added, skipped = merge(config, servers)
            if added:
                await self._commit(merged)
            return added, skipped

    async def keep(self) -> None:
        """Write the running config to the file (the demo's servers become the user's own)."""
        async with self._lock:
            await self._commit(self.current())

    async def remove_server(self, name: str) -> None:
        """Remove a server; its tool settings stay in the file for when it comes back."""
        async with self._lock:
            config = self.current()
            if name not in config.servers:
                raise ControlError(f"no server named {name!r} in {self.path.name}")
            await self._commit(config.without_server(name))

    async def set_enabled(self, name: str, enabled: bool) -> None:
        async with self._lock:
            config = self.current()
            server = config.servers.get(name)
            if server is None:
                raise ControlError(f"no server named {name!r} in {self.path.name}")
            await self._commit(config.with_server(replace(server, disabled=not enabled)))

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

    async def _commit(self, config: Config) -> None:
        try:
            await asyncio.to_thread(save_config, config, self.path)
        except OSError as exc:
            raise ControlError(f"cannot save {self.path}: {exc.strerror or exc}") from exc
        if self.engine is not None:
            self.engine.adopt_config_file()  # the demo, if it ran, is the user's config now
            await self.engine.apply_config(config)


def _check_name(name: str) -> None:
    if not SERVER_NAME.match(name):
        raise ControlError(
            f"server name {name!r}: use letters, digits, '-', '_' or '.', starting with a letter or digit"
        )
