"""The `connect` relay, fast: a client's JSON-RPC lines relayed to an engine served in this process
(fake child processes behind it), over each link — the engine's local socket and its Streamable
HTTP endpoint — the handshake, requests and answers, and what happens to a tool call in flight when
the engine goes away. The relay as clients launch it, as a subprocess in front of real engines:
tests/e2e/test_connect.py."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.connect.http_relay import HttpRelay
from mcpmanager.core.connect.relay import MAYBE_RUN, Endpoint, Relay
from mcpmanager.core.connect.socket_relay import SocketRelay
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.host import host_http
from mcpmanager.core.serve.bearer_token import ensure_token
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer

CONFIG = json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}, "supervisor": {"stopGrace": 0.1}})
HANDSHAKE = "2025-11-25"
LINKS: dict[str, type[Relay]] = {"socket": SocketRelay, "http": HttpRelay}


def message(id: int | None, method: str, **params: Any) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        body["id"] = id
    return json.dumps(body).encode() + b"\n"


INITIALIZE = message(
    1, "initialize", protocolVersion=HANDSHAKE, capabilities={}, clientInfo={"name": "test", "version": "1"}
)
INITIALIZED = message(None, "notifications/initialized")


class Engines:
    """Engines served over HTTP in this process, one after another, on one user's runtime folder."""

    def __init__(self, home: Path, tg: TaskGroup) -> None:
        self.paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
        self.tg = tg
        self.server = MemoryServer("notes")
        self.current: tuple[Engine, anyio.CancelScope, Endpoint] | None = None
        self.found = 0

    async def start(self) -> Endpoint:
        engine = Engine(parse_config(CONFIG, "test"), self.paths, "direct", spawner=FakeSpawner(notes=self.server))
        await engine.start()
        urls: list[str] = []
        scope = anyio.CancelScope()

        async def serve() -> None:
            with scope:
                await host_http(engine, 0, on_listening=urls.append)

        self.tg.start_soon(serve)
        with anyio.fail_after(10):
            while not urls or engine.downstreams["notes"].status.state is not State.READY:
                await anyio.sleep(0.01)
        assert engine.local_socket is not None  # served beside HTTP on this machine
        endpoint = Endpoint(urls[0], ensure_token(self.paths.runtime_dir), str(engine.local_socket))
        self.current = (engine, scope, endpoint)
        return endpoint

    async def stop(self) -> None:
        assert self.current is not None
        engine, scope, _ = self.current
        scope.cancel()
        await engine.stop()
        self.current = None

    def find(self) -> Endpoint:
        """The relay's `find_engine`: the engine serving now (it runs in a worker thread)."""
        self.found += 1
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            current = self.current
            if current is not None:
                return current[2]
            time.sleep(0.02)
        raise RuntimeError("no engine came up")


class Client:
    """The client side of the relay: lines in, answers out (by id), notifications kept."""

    def __init__(self) -> None:
        self.send, self._lines = anyio.create_memory_object_stream[bytes](100)
        self.answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[str] = []

    async def lines(self) -> AsyncIterator[bytes]:
        receive: MemoryObjectReceiveStream[bytes] = self._lines
        async with receive:
            async for line in receive:
                yield line

    async def write(self, line: bytes) -> None:
        for part in line.splitlines():
            body = json.loads(part)
            if "id" in body and "method" not in body:
                self.answers[body["id"]] = body
            elif "method" in body:
                self.notifications.append(body["method"])

    async def answer(self, id: Any) -> dict[str, Any]:
        with anyio.fail_after(10):
            while id not in self.answers:
                await anyio.sleep(0.01)
        return self.answers[id]


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
