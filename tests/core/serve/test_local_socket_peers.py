"""The engine's local socket (`serve/local_socket.py`) against peers that send what no `connect`
sends: whatever one peer sends, it is refused or served, the socket goes on serving the next
(a peer's failure must not end the listener, and with it the engine), and the token stays out
of the log."""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from pathlib import Path

import pytest

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve.bearer_token import ensure_token
from mcpmanager.core.serve.local_hello import hello_line
from tests.core.serve.test_local_socket import Peer, hosted, said, tool_names


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("hello", "why"),
    [
        # A lone surrogate: valid JSON, a str that has no UTF-8 (comparing it to the token raised).
        (b'{"mcpmanager": "connect/1", "token": "\\ud800", "mode": null}\n', "wrong token"),
        # Nested deeper than the JSON reader recurses (RecursionError, not ValueError), under the cap.
        (b"[" * 60_000 + b"\n", "a hello that is not JSON"),
    ],
    ids=["lone-surrogate-token", "deeply-nested"],
)
async def test_a_hello_the_json_reader_chokes_on_is_refused_and_the_next_peer_served(
    home: Path, hello: bytes, why: str
) -> None:
    async with hosted(home) as engine:
        assert await said(engine, hello) == ({"error": why}, None)
        assert engine.local_socket is not None
        peer = await Peer.open(engine.local_socket)
        try:
            await peer.send(hello_line(ensure_token(engine.paths.runtime_dir), "direct"))
            assert await peer.line() == {"ok": True}
            assert await tool_names(peer) == ["block", "echo"]
        finally:
            peer.close()


async def test_a_refusal_that_repeats_what_the_peer_sent_logs_no_token(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpmanager")
    async with hosted(home) as engine:
        token = ensure_token(engine.paths.runtime_dir)
        answer, _ = await said(engine, hello_line(token, token))  # the token where the mode goes
    assert answer["error"].startswith("unknown mode")  # (told to the peer, which sent it)
    assert "refused a local connection: unknown mode" in caplog.text
    assert token not in caplog.text


async def served(engine: Engine) -> Peer:
    """A peer the socket took and serves (its hello answered)."""
    assert engine.local_socket is not None
    peer = await Peer.open(engine.local_socket)
    await peer.send(hello_line(ensure_token(engine.paths.runtime_dir), "direct"))
    assert await peer.line() == {"ok": True}
    return peer


async def test_an_accept_that_fails_leaves_the_socket_and_its_sessions_serving(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of file descriptors (EMFILE, the whole process's limit) for a moment: the connection
    waits in the backlog and is taken once there are some again."""
    loop = asyncio.get_running_loop()
    accept = loop.sock_accept
    failures = [OSError(errno.EMFILE, "Too many open files")]

    async def failing_once(listener: socket.socket) -> tuple[socket.socket, object]:
        if failures:
            raise failures.pop()
        return await accept(listener)

    async with hosted(home) as engine:
        monkeypatch.setattr(loop, "sock_accept", failing_once)
        first = await served(engine)  # taken by the accept that was waiting; the next one fails
        second = await served(engine)
        try:
            assert not failures
            assert await tool_names(second) == ["block", "echo"]
            assert await tool_names(first) == ["block", "echo"]  # the session before goes on
        finally:
            first.close()
            second.close()
