"""The engine's local socket (`serve/local_socket.py`), served beside HTTP by `host_http` in this
process (fake child processes behind it): the hello it asks for and what it refuses, the session it
serves in the mode asked, the file (private, advertised, gone at the end, stale ones swept). The
`connect` relay over it: tests/core/connect/test_relay.py and, as clients launch it,
tests/e2e/test_connect.py."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.engine.advertisement import read_advertisements
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.host import host_http
from mcpmanager.core.serve import local_socket
from mcpmanager.core.serve.bearer_token import ensure_token
from mcpmanager.core.serve.http import PortUnavailable
from mcpmanager.core.serve.local_hello import hello_line
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer

CONFIG = json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}, "supervisor": {"stopGrace": 0.1}})
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


@asynccontextmanager
async def hosted(home: Path) -> AsyncIterator[Engine]:
    """An engine serving HTTP and its local socket until the block ends (and its servers stopped)."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(parse_config(CONFIG, "test"), paths, "discovery", spawner=FakeSpawner(notes=MemoryServer("notes")))
    await engine.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(host_http, engine, 0)
            with anyio.fail_after(10):
                while engine.local_socket is None or engine.downstreams["notes"].status.state is not State.READY:
                    await anyio.sleep(0.01)
            yield engine
            tg.cancel_scope.cancel()
    finally:
        await engine.stop()


class Peer:
    """A raw connection to the socket: lines out, lines in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, path: Path) -> Peer:
        return cls(*await asyncio.open_unix_connection(path))

    async def send(self, line: bytes | dict[str, Any]) -> None:
        self.writer.write(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
        await self.writer.drain()

    async def line(self) -> Any:
        """The next line, parsed (None at the end: the engine closed)."""
        with anyio.fail_after(10):
            raw = await self.reader.readline()
        return json.loads(raw) if raw else None

    def close(self) -> None:
        self.writer.close()


async def said(engine: Engine, hello: bytes) -> tuple[Any, Any]:
    """What the engine answers `hello`, and what it sends next (None: it closed)."""
    assert engine.local_socket is not None
    peer = await Peer.open(engine.local_socket)
    try:
        await peer.send(hello)
        return await peer.line(), await peer.line()
    finally:
        peer.close()


async def tool_names(peer: Peer) -> list[str]:
    await peer.send(INITIALIZE)
    assert (await peer.line())["id"] == 1
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    answer = await peer.line()
    assert answer["id"] == 2, answer
    return sorted(t["name"] for t in answer["result"]["tools"])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("hello", "why"),
    [
        (hello_line("not-the-token", None), "wrong token"),
        (b"GET / HTTP/1.1\n", "a hello that is not JSON"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n', "not a connect/1 hello"),
        (b"[1, 2]\n", "not a connect/1 hello"),
        (b'{"mcpmanager": "connect/1", "mode": "direct"}\n', "wrong token"),
    ],
)
async def test_a_peer_without_the_right_hello_is_told_why_and_let_go(home: Path, hello: bytes, why: str) -> None:
    async with hosted(home) as engine:
        assert await said(engine, hello) == ({"error": why}, None)


async def test_a_mode_that_does_not_exist_is_refused_naming_those_that_do(home: Path) -> None:
    async with hosted(home) as engine:
        hello = hello_line(ensure_token(engine.paths.runtime_dir), "everything")
        assert await said(engine, hello) == ({"error": "unknown mode 'everything' (one of discovery, direct)"}, None)


async def test_a_peer_that_says_nothing_is_let_go(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_socket, "HELLO_TIMEOUT", 0.2)
    async with hosted(home) as engine:
        assert engine.local_socket is not None
        peer = await Peer.open(engine.local_socket)
        assert await peer.line() == {"error": "no hello within 0.2 s"}
        assert await peer.line() is None
        peer.close()


async def test_each_session_is_served_in_the_mode_its_hello_asks(home: Path) -> None:
    async with hosted(home) as engine:
        assert engine.local_socket is not None
        token = ensure_token(engine.paths.runtime_dir)
        direct, default = await Peer.open(engine.local_socket), await Peer.open(engine.local_socket)
        await direct.send(hello_line(token, "direct"))
        await default.send(hello_line(token, None))
        assert await direct.line() == {"ok": True}
        assert await default.line() == {"ok": True}
        assert await tool_names(direct) == ["block", "echo"]  # one server: its tools bare
        assert await tool_names(default) == ["call_tool", "discover_tools", "get_tool_schema", "search_tools_regex"]
        await direct.send(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
        )
        assert (await direct.line())["result"]["content"][0]["text"] == "hi"
        direct.close()
        default.close()


async def test_the_socket_is_private_advertised_and_gone_with_the_engine(home: Path) -> None:
    runtime = home / "run"
    runtime.mkdir(parents=True)
    stale = runtime / "engine-999999999.sock"  # an engine killed before it could remove its socket
    stale.write_bytes(b"")
    unrelated = runtime / "engine-notes.txt"
    unrelated.write_bytes(b"")
    async with hosted(home) as engine:
        path = engine.local_socket
        assert path is not None and path.parent == runtime
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        [advertised] = read_advertisements(runtime)
        assert advertised["socket"] == str(path)
        assert not stale.exists()
        assert unrelated.exists()
    assert not path.exists()


def test_no_socket_where_the_runtime_directory_is_too_deep_for_one(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    assert local_socket.socket_path(deep) is None  # `connect` relays over HTTP then
    assert local_socket.socket_path(Path("/run/user/1000/mcpmanager")) == Path(
        f"/run/user/1000/mcpmanager/engine-{os.getpid()}.sock"
    )


async def test_a_busy_port_is_raised_as_it_is_and_the_socket_goes_with_it(home: Path) -> None:
    """Not inside the task group's exception group: the CLI and the window say it in one line."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(parse_config(CONFIG, "test"), paths, "discovery", spawner=FakeSpawner(notes=MemoryServer("notes")))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        with pytest.raises(PortUnavailable, match="Address already in use"):
            await host_http(engine, busy.getsockname()[1])
    assert list((home / "run").glob("*.sock")) == []
