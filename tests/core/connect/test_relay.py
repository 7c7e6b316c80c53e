"""The `connect` relay, fast: a client's JSON-RPC lines relayed to an engine served in this process
(fake child processes behind it), over each link — the engine's local socket and its Streamable
HTTP endpoint — the handshake, requests and answers, and what happens to a tool call in flight when
the engine goes away. The relay as clients launch it, as a subprocess in front of real engines:
tests/e2e/test_connect.py."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcpmanager.core.connect.http_relay import HttpRelay
from mcpmanager.core.connect.relay import MAYBE_RUN, Endpoint, Relay
from mcpmanager.core.connect.socket_relay import SocketRelay
from tests.helpers.relay_engines import HANDSHAKE, INITIALIZE, INITIALIZED, Client, Engines, message

LINKS: dict[str, type[Relay]] = {"socket": SocketRelay, "http": HttpRelay}


@asynccontextmanager
async def relayed(home: Path, link: str) -> AsyncIterator[tuple[Engines, Client, Callable[[], None]]]:
    async with anyio.create_task_group() as tg:
        engines, client = Engines(home, tg), Client()
        relay = LINKS[link](engines.find, client.write, await engines.start())
        tg.start_soon(relay.run, client.lines())
        try:
            yield engines, client, client.send.close
        finally:
            client.send.close()
            if engines.current is not None:
                await engines.stop()
            tg.cancel_scope.cancel()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.parametrize("link", LINKS)
async def test_the_handshake_requests_and_answers_pass_through(home: Path, link: str) -> None:
    async with relayed(home, link) as (_, client, _close):
        await client.send.send(INITIALIZE)
        initialized = await client.answer(1)
        assert initialized["result"]["protocolVersion"] == HANDSHAKE
        await client.send.send(INITIALIZED)
        await client.send.send(message(2, "tools/list"))
        assert [t["name"] for t in (await client.answer(2))["result"]["tools"]] == ["echo", "block"]
        await client.send.send(message(3, "tools/call", name="echo", arguments={"text": "through the relay"}))
        answered = await client.answer(3)
        assert answered["result"]["content"][0]["text"] == "through the relay"


@pytest.mark.parametrize("link", LINKS)
async def test_a_call_in_flight_when_the_engine_goes_away_may_or_may_not_have_run(home: Path, link: str) -> None:
    async with relayed(home, link) as (engines, client, _close):
        await client.send.send(INITIALIZE)
        await client.answer(1)
        await client.send.send(INITIALIZED)
        await client.send.send(message(2, "tools/call", name="block", arguments={}))
        with anyio.fail_after(10):
            while not engines.server.calls:
                await anyio.sleep(0.01)
        await engines.stop()  # the engine goes away under the call
        interrupted = await client.answer(2)
        assert interrupted["result"]["isError"] is True
        assert MAYBE_RUN in interrupted["result"]["content"][0]["text"]  # never sent twice
        await engines.start()
        await client.send.send(message(3, "tools/list"))  # the relay found the new engine
        assert [t["name"] for t in (await client.answer(3))["result"]["tools"]] == ["echo", "block"]
        assert engines.server.calls == [("block", {})]
        assert engines.found == 1  # found again once, by the relay
        assert "notifications/tools/list_changed" in client.notifications  # the new engine's tools may differ


@pytest.mark.parametrize("link", LINKS)
async def test_a_handshake_sent_while_no_engine_serves_is_sent_once_when_one_does(home: Path, link: str) -> None:
    """Not replayed as well: the new engine would get it twice, the client a list_changed before it."""
    async with relayed(home, link) as (engines, client, _close):
        await engines.stop()  # the engine the relay found goes before the client says anything
        await anyio.sleep(0.3)  # (the socket relay sees its end close)
        await client.send.send(INITIALIZE)
        await engines.start()
        assert (await client.answer(1))["result"]["protocolVersion"] == HANDSHAKE
        await client.send.send(INITIALIZED)
        await client.send.send(message(2, "tools/list"))
        assert [t["name"] for t in (await client.answer(2))["result"]["tools"]] == ["echo", "block"]
        assert client.notifications == []  # nothing to list again: it had listed nothing yet


@pytest.mark.parametrize("link", LINKS)
async def test_requests_waiting_for_an_engine_that_never_answers_get_an_error_in_time(home: Path, link: str) -> None:
    """An engine advertised that does not serve (hung, or a stale file whose pid was reused): not a
    wait for ever. The next request tries again, and reaches the engine that serves by then."""
    home.mkdir(parents=True)
    dead = Endpoint("http://127.0.0.1:9/mcp", "a-token", str(home / "nothing-listens.sock"))
    async with anyio.create_task_group() as tg:
        engines, client = Engines(home, tg), Client()
        relay = LINKS[link](lambda: engines.find() if engines.current else dead, client.write, dead, patience=0.5)
        tg.start_soon(relay.run, client.lines())
        started = time.monotonic()
        await client.send.send(INITIALIZE)
        error = (await client.answer(1))["error"]
        assert "could not be reached in 0.5 s" in error["message"], error
        assert error["message"].endswith("nothing was sent")
        assert time.monotonic() - started < 5
        await engines.start()
        await client.send.send(INITIALIZE.replace(b'"id": 1', b'"id": 2'))
        assert (await client.answer(2))["result"]["protocolVersion"] == HANDSHAKE
        client.send.close()
        await engines.stop()
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("link", LINKS)
async def test_a_request_after_a_long_idle_without_an_engine_waits_its_full_time(home: Path, link: str) -> None:
    """The time the relay sat idle with no engine (the user quit the app) is not time spent waiting:
    the next request gets all its patience, and the engine that comes meanwhile answers it."""
    async with anyio.create_task_group() as tg:
        engines, client = Engines(home, tg), Client()
        dead = Endpoint("http://127.0.0.1:9/mcp", "a-token", str(home / "nothing-listens.sock"))
        first = await engines.start()
        relay = LINKS[link](lambda: engines.find() if engines.current else dead, client.write, first, patience=1.0)
        tg.start_soon(relay.run, client.lines())
        await client.send.send(INITIALIZE)
        await client.answer(1)
        await client.send.send(INITIALIZED)
        await engines.stop()  # nothing in flight: the relay waits for a request before it looks again
        await anyio.sleep(1.5)  # longer than its patience
        await client.send.send(message(2, "tools/list"))
        await anyio.sleep(0.3)  # it finds no engine at first
        await engines.start()
        answer = await client.answer(2)
        assert [t["name"] for t in answer["result"]["tools"]] == ["echo", "block"], answer
        client.send.close()
        await engines.stop()
        tg.cancel_scope.cancel()
