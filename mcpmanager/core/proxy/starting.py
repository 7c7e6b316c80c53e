"""Waiting for servers that are still starting, for a request that names what one of them may own.

On a first run nothing is cached, and prompts and resources are never cached: a name a client read
elsewhere may belong to a server seconds away from ready, and waiting beats an "unknown" that would
be wrong soon. But a request waits only for servers that could own its name (those whose lists are
not known yet, and of those the one its name spells out, if it spells one out), only while the name
does not resolve, and never longer than their `startingWait`. A healthy server's tool is never held
up by another server's slow start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

import anyio

from mcpmanager.core.resolve.words import servers_named_in
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State

POLL = 0.05  # seconds between looks: cheap, and only while something is starting
T = TypeVar("T")


class StartingServers:
    def __init__(self, servers: Mapping[str, Downstream]) -> None:
        self.servers = servers  # the engine's live map

    def could_own(self, name: str | None, unknown: Callable[[str], bool]) -> list[Downstream]:
        """Starting servers whose lists are not known yet (`unknown(server)`) that could own `name`:
        the servers it names (`github__create_issue`), or all of them when it names none (a URI, given
        as None, never names a server)."""
        starting = [d for d in self.servers.values() if d.status.state is State.STARTING and unknown(d.name)]
        named = servers_named_in(name, self.servers) if name is not None else set()
        return [d for d in starting if d.name in named] if named else starting

    async def wait(self, pending: Callable[[], Iterable[Downstream]], found: Callable[[], bool]) -> bool:
        """Wait until `found()` or nothing is `pending()`, bounded by the longest startingWait of the
        servers pending at first. True if there was anything to wait for."""
        first = list(pending())
        if not first:
            return False
        with anyio.move_on_after(max(d.settings.starting_wait for d in first)):
            while not found() and any(True for _ in pending()):
                await anyio.sleep(POLL)
        return True

    async def retry(
        self,
        attempt: Callable[[], T],
        good: Callable[[T], bool],
        unknown: Callable[[str], bool],
        generation: Callable[[], int],
    ) -> T:
        """`attempt()`, and while it finds nothing (`good`), again each time the catalogue changes
        (`generation`) while servers whose lists are not known yet are starting: a search made
        seconds after the engine started on a first run must not answer "no tool" for tools a
        moment away. Bounded like `wait`."""
        result = attempt()
        if good(result):
            return result
        seen = [generation()]

        def found() -> bool:
            nonlocal result
            if generation() == seen[0]:
                return False
            seen[0] = generation()
            result = attempt()
            return good(result)

        if await self.wait(lambda: self.could_own(None, unknown), found) and not good(result):
            result = attempt()
        return result
