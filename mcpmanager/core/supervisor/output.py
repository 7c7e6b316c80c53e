"""A stdio server's output, cut into lines and parsed in the loop's own read callback.

asyncio's subprocess transport hands each chunk a child writes on one loop turn later
(`call_soon`), and its StreamReader wakes the task that reads it one more turn later: two turns of
the loop between a server's answer and its caller, on every call (docs/benchmarks.md). So the
child's stdout is a pipe of our own, read by `Output`, a protocol: each chunk is cut into lines and
each line handled at once (`Handle`: the process's parser), so an answer to a raw call
(`raw_calls`) reaches its waiter from the read callback itself.

Messages for the session wait in a queue, in order, for the task that hands them to the session
(`next`; it waits for the session to take each). While one waits, or is being handed over, the
lines after it are queued unparsed: an answer never overtakes a message the server wrote before it
(and `raw_calls` keeps its rule for an answer that follows one). Reading pauses while the queue is
long, so a session that stops reading holds the server back, as the reading task did.

Where the loop cannot read a pipe of our own (Windows' proactor reads only overlapped pipes), the
same `Output` is fed by a task reading anyio's stream (`feed_from`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable

import anyio
import anyio.abc
from mcp.shared.message import SessionMessage

from mcpmanager.core.system.line_framer import LineFramer, Overlong

# A line of the server's output → the session's message on it, or None (an answer a raw call took,
# a blank line, noise).
Handle = Callable[[bytes | Overlong], SessionMessage | None]
HIGH_WATER = 64  # queued lines and messages at which reading pauses (it resumes at half)
_CHUNK = 65536


class Output(asyncio.Protocol):
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._framer = LineFramer()  # no cap: a server's result may be as large as it is
        self._queue: deque[SessionMessage | bytes | Overlong] = deque()
        self._holding = False  # the session's last message is being handed over
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._transport: asyncio.BaseTransport | None = None
        self._paused = False
        self._room: asyncio.Future[None] | None = None  # `feed_from` waiting for the queue to shorten

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        queue = self._queue
        for line in self._framer.feed(data):
            if queue or self._holding:
                queue.append(line)  # (handled in its turn, after what came before it)
                continue
            message = self._handle(line)
            if message is not None:
                queue.append(message)
        if queue:
            self._wake()
            if len(queue) >= HIGH_WATER and not self._paused:
                self._paused = True
                if isinstance(self._transport, asyncio.ReadTransport):
                    self._transport.pause_reading()

    def eof_received(self) -> bool | None:
        self._end()
        return None  # (the transport closes itself)

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    async def next(self) -> SessionMessage:
        """The session's next message, once the one before it was handed over (the caller asks for
        the next only then); EndOfStream when the output has ended and every message was taken."""
        self._holding = False
        queue = self._queue
        while True:
            while queue:
                item = queue.popleft()
                if self._paused and len(queue) <= HIGH_WATER // 2:
                    self._resume()
                message = item if isinstance(item, SessionMessage) else self._handle(item)
                del item
                if message is not None:
                    self._holding = True
                    return message
            if self._ended:
                raise anyio.EndOfStream
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def room(self) -> None:
        """Until reading may go on (`feed_from`'s pause)."""
        while self._paused:
            self._room = asyncio.get_running_loop().create_future()
            try:
                await self._room
            finally:
                self._room = None

    def _resume(self) -> None:
        self._paused = False
        if isinstance(self._transport, asyncio.ReadTransport):
            self._transport.resume_reading()
        if self._room is not None and not self._room.done():
            self._room.set_result(None)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _end(self) -> None:
        # A last line without its newline is dropped, as the SDK's own stdio reader drops it.
        self._ended = True
        self._wake()


async def feed_from(output: Output, stream: anyio.abc.ByteReceiveStream) -> None:
    """Feed `output` from `stream` until it ends (where the loop cannot read the pipe itself)."""
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        while True:
            output.data_received(await stream.receive(_CHUNK))
            await output.room()  # (no transport to pause: this task stops reading instead)
    output.connection_lost(None)
