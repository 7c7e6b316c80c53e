"""Engines served in the test's own process (fake child processes behind them) and a client of
lines, for the `connect` relay's fast tests (tests/core/connect)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.connect.relay import Endpoint
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.host import host_http
from mcpmanager.core.serve.bearer_token import ensure_token
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer

CONFIG = json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}, "supervisor": {"stopGrace": 0.1}})
HANDSHAKE = "2025-11-25"


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
        self.current: tuple[Engine, anyio.CancelScope, Endpoint, anyio.Event] | None = None
        self.found = 0

    async def start(self) -> Endpoint:
        engine = Engine(parse_config(CONFIG, "test"), self.paths, "direct", spawner=FakeSpawner(notes=self.server))
        await engine.start()
        urls: list[str] = []
        scope = anyio.CancelScope()
        served = anyio.Event()

        async def serve() -> None:
            try:
                with scope:
                    await host_http(engine, 0, on_listening=urls.append)
            finally:
                served.set()

        self.tg.start_soon(serve)
        with anyio.fail_after(10):
            while not urls or engine.downstreams["notes"].status.state is not State.READY:
                await anyio.sleep(0.01)
        assert engine.local_socket is not None  # served beside HTTP on this machine
        endpoint = Endpoint(urls[0], ensure_token(self.paths.runtime_dir), str(engine.local_socket))
        self.current = (engine, scope, endpoint, served)
        return endpoint

    async def stop(self) -> None:
        """As a front end stops: the endpoint first (the calls in flight get their grace), then the
        servers."""
        assert self.current is not None
        engine, scope, _, served = self.current
        scope.cancel()
        await served.wait()
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
