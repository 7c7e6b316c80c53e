"""The socket relay (`connect/socket_relay.py`) against engines that fail it, in this process: a
stand-in engine on a Unix socket where a real one cannot fail on cue (it echoes the hello, or its end
closes just before the client's next call), and a real engine (`test_relay.Engines`) to carry on."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from mcpmanager.core.connect.relay import MAYBE_RUN, Endpoint
from mcpmanager.core.connect.socket_relay import SocketRelay
from tests.helpers.relay_engines import INITIALIZE, INITIALIZED, Client, Engines, message

TOKEN = "the-engines-token-0123456789"
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def stand_in(home: Path) -> Endpoint:
    """Where the stand-in engine listens (a short path: a socket's is limited)."""
    home.mkdir(parents=True, exist_ok=True)
    return Endpoint("http://127.0.0.1:9/mcp", TOKEN, str(home / "stand-in.sock"), "direct")


async def echo_the_hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """No engine: something at the socket's path that says back what it is told."""
    writer.write(await reader.readline())
    await writer.drain()
    writer.close()


async def test_a_refusal_quoting_the_hello_never_logs_the_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint = stand_in(tmp_path / "home")
    server = await asyncio.start_unix_server(echo_the_hello, endpoint.socket)
    client = Client()
    relay = SocketRelay(lambda: endpoint, client.write, endpoint)
    caplog.set_level(logging.DEBUG, logger="mcpmanager")
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(relay.run, client.lines())
                await client.send.send(INITIALIZE)  # it tries the stand-in again and again
                await anyio.sleep(0.6)
                client.send.close()  # the client leaves: the relay ends (within fail_after)
    finally:
        server.close()
    assert "refused the bridge (no answer to the hello" in caplog.text  # the refusal was logged...
    assert TOKEN not in caplog.text  # ...without the token it quoted


async def test_the_relay_ends_with_its_client_while_no_engine_can_be_reached(tmp_path: Path) -> None:
    endpoint = stand_in(tmp_path / "home")  # nothing listens there
    client = Client()
    relay = SocketRelay(lambda: endpoint, client.write, endpoint)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay.run, client.lines())
            await client.send.send(INITIALIZE)  # waits for an engine that does not come
            await client.send.send(INITIALIZED)
            while relay.connections <= 2:  # it tries again, more than once (however slow the machine)
                await anyio.sleep(0.02)
            client.send.close()
    assert relay.connections > 2


class ClosingEngine:
    """An engine that answers the handshake, then whose end of the connection closes on cue."""

    def __init__(self) -> None:
        self.connections: list[asyncio.StreamWriter] = []
        self.received: list[bytes] = []

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()  # the hello
        writer.write(b'{"ok": true}\n')
        self.connections.append(writer)
        try:
            while line := await reader.readline():
                self.received.append(line)
                body = json.loads(line)
                if body.get("method") == "initialize":
                    info = {"name": "stand-in", "version": "1"}
                    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": info}
                    writer.write(json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode() + b"\n")
        finally:
            writer.close()

    def close_now(self) -> None:
        """Its end closed at once (as a killed process's is), not in the loop's next turn."""
        raw: socket.socket = self.connections[-1].get_extra_info("socket")
        raw.shutdown(socket.SHUT_RDWR)


async def test_a_call_the_closed_engine_never_received_is_sent_to_the_next_one(tmp_path: Path) -> None:
    """The engine is gone, the relay has not read so yet, and the client's call is written: it cannot
    have reached the engine (its end was closed), so it goes to the next one instead of failing as a
    call that may or may not have run."""
    endpoint = stand_in(tmp_path / "home")
    closing = ClosingEngine()
    server = await asyncio.start_unix_server(closing, endpoint.socket)
    try:
        async with anyio.create_task_group() as tg:
            engines, client = Engines(tmp_path / "home", tg), Client()
            relay = SocketRelay(engines.find, client.write, endpoint)
            tg.start_soon(relay.run, client.lines())
            await client.send.send(INITIALIZE)
            await client.answer(1)
            await client.send.send(INITIALIZED)
            await engines.start()  # the next engine, for when the relay looks
            closing.close_now()
            client.send.send_nowait(message(2, "tools/call", name="echo", arguments={"text": "once"}))
            answered = await client.answer(2)
            assert MAYBE_RUN not in json.dumps(answered)
            assert answered["result"]["content"][0]["text"] == "once"
            assert engines.server.calls == [("echo", {"text": "once"})]
            assert not any(b"tools/call" in line for line in closing.received)
            client.send.close()
            await engines.stop()
            tg.cancel_scope.cancel()
    finally:
        server.close()


async def dies_on_the_replayed_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """An engine that takes the hello and the replayed `initialize`, then is gone before answering."""
    try:
        await reader.readline()
        writer.write(b'{"ok": true}\n')
        await reader.readline()
    finally:
        writer.close()


async def test_requests_queued_while_the_engine_is_away_reach_the_next_in_order_and_once(tmp_path: Path) -> None:
    """The engine goes, the client goes on sending; the first engine found dies as the relay replays
    the handshake to it; the next one serves. No call twice, none lost, their order kept."""
    dying = stand_in(tmp_path / "home")
    server = await asyncio.start_unix_server(dies_on_the_replayed_handshake, dying.socket)
    try:
        async with anyio.create_task_group() as tg:
            engines, client = Engines(tmp_path / "home", tg), Client()
            found = [dying]  # the relay's first look after the loss; then the engines serving

            def find() -> Endpoint:
                return found.pop() if found else engines.find()

            relay = SocketRelay(find, client.write, await engines.start())
            tg.start_soon(relay.run, client.lines())
            await client.send.send(INITIALIZE)
            await client.answer(1)
            await client.send.send(INITIALIZED)
            await engines.stop()
            sent = range(10, 70)
            for id in sent:  # tools/list among the calls: a request that is sent again, not failed
                line = (
                    message(id, "tools/list")
                    if id % 5 == 0
                    else message(id, "tools/call", name="echo", arguments={"text": str(id)})
                )
                await client.send.send(line)
            await anyio.sleep(0.3)  # the dying engine is found and dies meanwhile
            assert not found and relay.connections == 2  # the first engine, and the dying one
            await engines.start()
            calls = [id for id in sent if id % 5]
            for id in calls:
                assert (await client.answer(id))["result"]["content"][0]["text"] == str(id)
            assert [a["text"] for _, a in engines.server.calls] == [str(id) for id in calls]
            for id in sent[::5]:
                assert [t["name"] for t in (await client.answer(id))["result"]["tools"]] == ["echo", "block"]
            assert relay.connections == 3
            client.send.close()
            await engines.stop()
            tg.cancel_scope.cancel()
    finally:
        server.close()
