"""A fake child process for the supervisor: a `MemoryServer` behind the `ChildProcess` interface.

`Downstream` spawns it like a real stdio server (the engine's `spawner`), talks MCP to it over memory
streams, reads its "stderr" and sees it exit: `crash(code, *stderr)` ends it as a dying server would
(stderr lines first, then the pipes close and the exit code is known). Nothing is spawned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.sdk_compat import TransportStreams
from mcpmanager.core.supervisor.process import ChildProcess, Exit, SpawnError
from mcpmanager.core.supervisor.stderr_log import StderrLog
from tests.helpers.memory_servers import MemoryServer

FAKE_PID = 4_000_000  # above any pid_max: never a real process


class FakeChild(ChildProcess):
    def __init__(self, config: StdioServerConfig, log: StderrLog, grace: float, server: MemoryServer) -> None:
        super().__init__(config.command, config.args, config.env, config.cwd, log, grace)
        self.memory = server
        self.code: int | None = None
        self.started = False
        self.stopped = False
        self._close: Callable[[], None] | None = None

    @property
    def pid(self) -> int | None:
        return FAKE_PID if self.started else None

    @property
    def exit(self) -> Exit:
        return Exit(self.code)

    async def start(self) -> None:
        if self.command == "missing":
            raise SpawnError("command not found: missing", permanent=True)
        self.started = True
        self.log.note(f"started pid {FAKE_PID}: {self.command}")

    @asynccontextmanager
    async def transport(self) -> AsyncIterator[TransportStreams]:
        async with self.memory.streams() as (client, end):
            self._close = end
            try:
                yield client
            finally:
                await self.stop()

    def crash(self, code: int, *stderr: str) -> None:
        """Die as a server does: last words on stderr, then the exit."""
        self.log.add(list(stderr))
        self.code = code
        self.exited_on_its_own = True
        self.exited.set()
        self.stderr_closed.set()
        if self._close is not None:
            self._close()

    async def stop(self) -> None:
        self.stopped = True
        if self.code is None:
            self.code = 0
        self.exited.set()


class FakeSpawner:
    """The `spawner` of a Downstream or an Engine: one `FakeChild` per start, on that server's
    `MemoryServer` (made on first use), kept in `children` (the latest last)."""

    def __init__(self, **servers: MemoryServer) -> None:
        self.servers = dict(servers)
        self.children: dict[str, list[FakeChild]] = {}

    def __call__(self, config: StdioServerConfig, log: StderrLog, grace: float) -> ChildProcess:
        server = self.servers.setdefault(config.name, MemoryServer(config.name))
        child = FakeChild(config, log, grace, server)
        self.children.setdefault(config.name, []).append(child)
        return child

    def latest(self, name: str) -> FakeChild:
        return self.children[name][-1]
