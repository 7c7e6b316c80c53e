"""The stop's drain: it waits for requests running on servers, up to its grace, and not for one
parked on its client's answer."""

from __future__ import annotations

import anyio
import pytest

from mcpmanager.core.proxy.callers import Callers
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.serve import stopping
from mcpmanager.core.serve.stopping import drained
from tests.core.proxy.test_rounds import LEGACY, MODERN, FakeSession, ctx


async def test_the_drain_ends_as_the_last_request_in_flight_does() -> None:
    callers = Callers(Connections())
    started = anyio.current_time()
    assert await drained(callers, grace=5)  # nothing in flight: at once (after a moment's settle)
    assert anyio.current_time() - started < 1
    caller = callers.enter("srv", ctx(FakeSession(LEGACY)))
    ended_at: list[float] = []

    async def finish() -> None:
        await anyio.sleep(0.2)
        ended_at.append(anyio.current_time())
        callers.leave(caller)

    async with anyio.create_task_group() as tg:
        tg.start_soon(finish)
        assert await drained(callers, grace=5)
        assert ended_at and anyio.current_time() - ended_at[0] < 1  # (not the grace: as it ended)


async def test_the_drain_gives_up_after_its_grace_and_skips_parked_requests() -> None:
    callers = Callers(Connections())
    running = callers.enter("a", ctx(FakeSession(LEGACY)))
    parked = callers.enter("b", ctx(FakeSession(MODERN)), parkable=True)
    started = anyio.current_time()
    assert not await drained(callers, grace=0.2)
    assert anyio.current_time() - started >= 0.2
    callers.leave(running)
    parked.parked = True  # waiting for its client's retry: nothing runs on the server
    assert callers.busy() is False
    assert await drained(callers, grace=5)


async def test_the_drain_waits_for_a_request_that_starts_as_another_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A moment with nothing running is not the end: the answer of the call that just left is still
    on its way out, and the next may be entering."""
    monkeypatch.setattr(stopping, "_SETTLE", 0.5)  # (the gap below stays inside it on a busy machine)
    callers = Callers(Connections())
    first = callers.enter("a", ctx(FakeSession(LEGACY)))
    later: list[float] = []

    async def relay() -> None:
        await anyio.sleep(0.1)
        callers.leave(first)
        await anyio.sleep(0.02)  # inside the settle
        second = callers.enter("b", ctx(FakeSession(LEGACY)))
        await anyio.sleep(0.3)
        later.append(anyio.current_time())
        callers.leave(second)

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        assert await drained(callers, grace=5)
        assert later and anyio.current_time() >= later[0]
