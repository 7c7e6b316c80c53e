"""The `connect` relay over the engine's local socket (`serve/local_socket.py`).

The engine serves the socket as `serve --stdio` serves its stdin, so nothing needs translating: the
client's lines go to the socket as they came, in their order, and the engine's lines to the client
as they come. What the shared relay keeps an eye on (the requests in flight, the handshake to
replay) is all that is read of them. Notifications, cancellations, the engine's own requests and
list_changed all travel on the one connection: there is no second stream to keep open.

While the engine is away and a new one is being reached, the client's lines wait, in order, for it.
While it is away and nothing asked for a new one (the user quit the app; the client sits idle),
what is no request — a notification, an answer to the gone engine's request — is dropped: the new
engine starts from the replayed handshake.
"""

from __future__ import annotations

import asyncio
import logging

import anyio

from mcpmanager.core.connect.relay import (
    PATIENCE,
    Endpoint,
    FindEngine,
    Message,
    NoEngine,
    Pending,
    Relay,
    WriteLine,
    lost_at,
    parse,
)
from mcpmanager.core.connect.stdio_lines import Lines
from mcpmanager.core.serve.local_hello import hello_line, refusal_of

logger = logging.getLogger(__name__)

HELLO_WAIT = 10.0  # seconds for the engine to answer the hello (a busy engine may take a moment)


class SocketRelay(Relay):
    def __init__(
        self, find_engine: FindEngine, write: WriteLine, endpoint: Endpoint | None = None, patience: float = PATIENCE
    ) -> None:
        super().__init__(find_engine, write, endpoint, patience)
        self._writer: asyncio.StreamWriter | None = None
        self._handshake = anyio.Event()  # the replayed handshake answered, or its connection gone
        self._queue: anyio.Event | None = None  # set once the last line waiting for an engine is sent

    async def _open(self, endpoint: Endpoint) -> None:
        if endpoint.socket is None:
            raise NoEngine("the engine running now offers no local socket (an older mcpmanager?): restart the client")
        generation = self._generation
        loop = asyncio.get_running_loop()
        try:
            transport, lines = await loop.create_unix_connection(
                Lines, endpoint.socket
            )  # its answer to the hello first
        except OSError as exc:  # gone, or not listening yet
            raise lost_at(generation, f"cannot reach {endpoint.socket}: {exc.strerror or exc}") from exc
        writer = asyncio.StreamWriter(transport, lines, None, loop)
        try:
            writer.write(hello_line(endpoint.token, endpoint.mode))
            with anyio.fail_after(HELLO_WAIT):
                answer = await anext(lines, b"")  # its first line: the answer to the hello
        except (OSError, TimeoutError) as exc:
            writer.close()
            raise lost_at(generation, f"the engine did not answer the hello ({type(exc).__name__})") from exc
        refusal = refusal_of(answer)
        if refusal is not None:  # (it may quote what came back: a peer that echoes says the token)
            writer.close()
            raise lost_at(generation, f"the engine refused the bridge ({refusal.replace(endpoint.token, '***')})")
        if self._writer is not None:
            self._writer.close()
        self._writer = writer
        self._reached()
        self._handshake = anyio.Event()
        self._spawn(self._read(lines, generation))

    async def _end_session(self) -> None:
        if self._writer is not None:
            self._writer.close()  # the engine ends the session at once

    # Client → engine ------------------------------------------------------------------------------

    async def _forward(self, raw: bytes, message: Message | None, request: Pending | None) -> None:
        if self._connected.is_set() and (self._queue is None or self._queue.is_set()):
            await self._send(raw, request)
            return
        if request is None and self._dormant:
            logger.info("no engine: dropped %r", raw[:200])
            return
        if request is not None:
            request.refused = True  # not sent yet: safe to send to whichever engine comes
        # It waits for the engine in a task of its own, behind the lines that wait already (their
        # order kept): the client's next lines are read meanwhile, its end of input among them.
        ahead, self._queue = self._queue, anyio.Event()
        self._spawn(self._send_when_connected(raw, request, ahead, self._queue))

    async def _send_when_connected(
        self, raw: bytes, request: Pending | None, ahead: anyio.Event | None, sent: anyio.Event
    ) -> None:
        try:
            if ahead is not None:
                await ahead.wait()
            await self._connected.wait()
            if request is not None:
                if self._pending.get(request.message.get("id")) is not request:
                    return  # an engine was lost meanwhile, and `_resend` sends this again
                request.refused = False
            await self._send(raw, request)
        finally:
            sent.set()

    async def _resend(self, request: Pending) -> None:
        with request.scope:
            await self._connected.wait()
            request.refused = False
            await self._send(request.raw, request)

    async def _send(self, raw: bytes, request: Pending | None = None) -> None:
        assert self._writer is not None
        try:
            self._writer.write(raw if raw.endswith(b"\n") else raw + b"\n")
            if request is not None and self._writer.transport.is_closing():
                request.refused = True  # it never left: the engine's end was closed (it is safe to send again)
            await self._writer.drain()
        except ConnectionError as exc:  # its reader sees the same, and handles the loss
            logger.info("the engine's socket closed under a write (%s)", exc)

    async def _replay(self) -> None:
        replay, _ = self._replayed_initialize()
        await self._send(replay)
        with anyio.move_on_after(HELLO_WAIT):
            await self._handshake.wait()
        if not self._handshake.is_set():
            raise lost_at(self._generation, f"the engine did not answer the handshake within {HELLO_WAIT:g} s")
        if self._dead == self._generation:
            raise lost_at(self._generation, "the engine closed before answering the handshake")
        if self._initialized is not None:
            await self._send(self._initialized)

    def _replay_answered(self, message: Message) -> None:
        self._handshake.set()

    # Engine → client ------------------------------------------------------------------------------

    async def _read(self, lines: Lines, generation: int) -> None:
        why = "the engine closed the connection"
        try:
            async for line in lines:
                await self._to_client(line, parse(line))
        except ConnectionError as exc:
            why = f"the engine's connection broke ({exc})"
        if generation == self._generation:
            self._handshake.set()  # a replay waiting for its answer gets none (`_lost` marks it dead)
        raise lost_at(generation, why)
