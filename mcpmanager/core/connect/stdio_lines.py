"""This process's stdin and stdout as lines of bytes on the event loop, for the `connect` relay.

Clients talk to `connect` over pipes; those are attached to the loop directly (no thread hop per
line). A file or a terminal (someone trying it by hand) is read through a worker thread instead.
A line is written whole, never interleaved with another.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

from mcpmanager.core.system.pipes import pollable

_LIMIT = 64 * 1024 * 1024  # bytes read ahead (a longer line is read in pieces: `read_line`)


@contextlib.asynccontextmanager
async def stdio_lines() -> AsyncIterator[tuple[AsyncIterator[bytes], Callable[[bytes], Awaitable[None]]]]:
    if sys.platform != "win32" and pollable(0) and pollable(1):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LIMIT)
        in_file = os.fdopen(os.dup(0), "rb", buffering=0)
        out_file = os.fdopen(os.dup(1), "wb", buffering=0)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
        write_transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out_file)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)

        async def lines() -> AsyncIterator[bytes]:
            while line := await read_line(reader):
                yield line

        async def write(line: bytes) -> None:
            writer.write(line)  # whole: a line is never interleaved with another (no lock to take)
            await writer.drain()  # waits only while the client reads slower than we write

        try:
            yield lines(), write
        finally:
            read_transport.close()
            write_transport.close()
        return

    async def thread_lines() -> AsyncIterator[bytes]:
        while line := await anyio.to_thread.run_sync(sys.stdin.buffer.readline):
            yield line

    lock = anyio.Lock()

    async def thread_write(line: bytes) -> None:
        async with lock:
            await anyio.to_thread.run_sync(lambda: (sys.stdout.buffer.write(line), sys.stdout.buffer.flush()))

    yield thread_lines(), thread_write


async def read_line(reader: asyncio.StreamReader) -> bytes:
    """The next line (b"" at the end), however long: the relay sets no cap of its own (the engine
    answers a request over its cap with an error naming its id; a tool result has none)."""
    parts: list[bytes] = []
    while True:
        try:
            parts.append(await reader.readuntil(b"\n"))
            break
        except asyncio.LimitOverrunError as exc:  # no newline within the limit: take what there is, read on
            parts.append(await reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:  # the end: a last line without its newline, or nothing
            parts.append(exc.partial)
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)
