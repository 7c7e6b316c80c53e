"""This process's stdin and stdout as lines of bytes on the event loop, for the `connect` relay;
and the engine's socket read as lines the same way (`socket_relay`).

Clients talk to `connect` over pipes; those are attached to the loop directly (no thread hop per
line), and what arrives is cut into lines in the loop's read callback (`Lines`, a protocol) by the
one line framer (`core/system/line_framer.py`): each line keeps its newline, as it is handed on; a
last line without one ends the input. A file or a terminal (someone trying it by hand) is read
through a worker thread and framed the same way. The relay sets no cap of its own: the engine
answers a request over its cap with an error naming its id, and a tool result has none. A line is
written whole, never interleaved with another.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import cast

import anyio

from mcpmanager.core.system.line_framer import LineFramer
from mcpmanager.core.system.pipes import pollable

HIGH_WATER = 128 * 1024 * 1024  # bytes of lines not yet taken at which reading pauses (as asyncio's 2 × 64 MiB)
LOW_WATER = HIGH_WATER // 2  # ... and resumes
_THREAD_CHUNK = 65536  # bytes a worker thread reads at once from a file or a terminal


class Lines(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """What a pipe or a socket brings, as lines with their newlines, framed as it arrives; iterate
    it for them. No task wakes per line: while lines are waiting, the next one is taken at once.
    A connection that broke raises its error once the lines before it were taken. (A protocol of
    asyncio's flow control, so that a `StreamWriter` can write on the same socket.)"""

    def __init__(self) -> None:
        super().__init__()
        self._framer = LineFramer(ends=True)  # no cap: lines of any length, joined once at their newline
        self._ready: deque[bytes] = deque()
        self._queued = 0  # bytes in `_ready`
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._error: BaseException | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        framer = self._framer
        held = framer.held
        lines = framer.feed(data)
        if not lines:
            return
        self._ready.extend(lines)  # type: ignore[arg-type]  # (without a cap a line is never Overlong)
        self._queued += held + len(data) - framer.held  # the lines' bytes
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self._queued >= HIGH_WATER and not self._paused and isinstance(self._transport, asyncio.ReadTransport):
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool:
        self._end(None)
        return True  # (a socket stays open for writing until it is closed, as asyncio's streams keep it)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # (wakes a writer waiting to drain)
        self._end(exc)

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> bytes:
        ready = self._ready
        while not ready:
            if self._ended:
                last = self._framer.rest()
                if last is not None:
                    return cast(bytes, last)
                if self._error is not None:
                    error, self._error = self._error, None
                    raise error
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        line = ready.popleft()
        self._queued -= len(line)
        if self._paused and self._queued <= LOW_WATER:
            self._paused = False
            if isinstance(self._transport, asyncio.ReadTransport):
                self._transport.resume_reading()
        return line

    def _end(self, exc: BaseException | None) -> None:
        if not self._ended:
            self._ended, self._error = True, exc
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


@contextlib.asynccontextmanager
async def stdio_lines() -> AsyncIterator[tuple[AsyncIterator[bytes], Callable[[bytes], Awaitable[None]]]]:
    if sys.platform != "win32" and pollable(0) and pollable(1):
        loop = asyncio.get_running_loop()
        in_file = os.fdopen(os.dup(0), "rb", buffering=0)
        out_file = os.fdopen(os.dup(1), "wb", buffering=0)
        read_transport, lines = await loop.connect_read_pipe(Lines, in_file)
        write_transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out_file)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)

        async def write(line: bytes) -> None:
            writer.write(line)  # whole: a line is never interleaved with another (no lock to take)
            await writer.drain()  # waits only while the client reads slower than we write

        try:
            yield lines, write
        finally:
            read_transport.close()
            write_transport.close()
        return

    stdin = cast(io.BufferedReader, sys.stdin.buffer)  # (a console's on Windows: its text as UTF-8)
    lock = anyio.Lock()

    async def thread_lines() -> AsyncIterator[bytes]:
        framer = LineFramer(ends=True)  # (as `Lines` frames, in this task: no transport to pause)
        while chunk := await anyio.to_thread.run_sync(stdin.read1, _THREAD_CHUNK):  # what there is (a terminal: a line)
            for line in framer.feed(chunk):
                yield cast(bytes, line)
        if (last := framer.rest()) is not None:
            yield cast(bytes, last)

    async def thread_write(line: bytes) -> None:
        async with lock:
            await anyio.to_thread.run_sync(lambda: (sys.stdout.buffer.write(line), sys.stdout.buffer.flush()))

    yield thread_lines(), thread_write
