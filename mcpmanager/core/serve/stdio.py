"""Serving one client on our own stdin/stdout (`serve --stdio`), without a thread hop per message.

The SDK's `stdio_server` reads and writes through `anyio.wrap_file`, a worker-thread round trip for
every line, read and flush: about a dozen thread hops per proxied call, most of the latency this
proxy would add. Here the process's pipes are attached to the event loop directly. As the SDK does,
fd 0 and fd 1 are moved off the wire while serving (fd 0 to /dev/null, fd 1 to stderr) so nothing
stray — a child that inherits them, a print — can corrupt the protocol stream.

When stdin or stdout is not a pipe or a socket (a terminal, a regular file), the SDK's transport is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from mcpmanager.core.config.modes import Mode
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.wire_lane import WireLane
from mcpmanager.core.sdk_compat import TransportStreams
from mcpmanager.core.serve.malformed import error_line, refusal
from mcpmanager.core.system.line_framer import LineFramer, Overlong, blank
from mcpmanager.core.system.lines import json_line, parse_line, to_message
from mcpmanager.core.system.pipes import pollable

_LIMIT = 64 * 1024 * 1024  # one JSON-RPC line may carry a large tool result; a longer one is refused
_CHUNK = 65536


async def serve_stdio(router: Router, fds: tuple[int, int] | None = None) -> None:
    """Serve one client over our stdin/stdout until it closes stdin (`fds`: over this pair of pipe
    ends instead, read and write, which it then owns)."""
    await serve_session(router, None, lambda lane: stdio_transport(lane, fds))


Transport = Callable[[WireLane | None], AbstractAsyncContextManager[TransportStreams]]  # given the lane


async def serve_session(router: Router, mode: Mode | None, transport: Transport) -> None:
    """One client's session in `mode` (None: the engine's) over `transport`, its lane ahead of it."""
    mode_server = router.mode_server(mode)
    server = mode_server.server
    lane = mode_server.wire_lane()
    with lane.serving() if lane is not None else contextlib.nullcontext():
        async with transport(lane) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


@contextlib.asynccontextmanager
async def stdio_transport(
    lane: WireLane | None = None, fds: tuple[int, int] | None = None
) -> AsyncIterator[TransportStreams]:
    """The session's streams over our stdin/stdout (or `fds`, owned from here on); `lane`: calls
    answered ahead of the session."""
    saved: tuple[int, int] | None = None
    if fds is not None:
        wire_in, wire_out = fds
    elif not (pollable(0) and pollable(1)):
        async with stdio_server() as streams:
            yield streams
        return
    else:
        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        saved = _divert()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    in_file = os.fdopen(wire_in, "rb", buffering=0)
    out_file = os.fdopen(wire_out, "wb", buffering=0)
    read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
    write_transport, write_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out_file)
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    try:
        async with line_transport(reader, writer, lane) as streams:
            yield streams
    finally:
        read_transport.close()
        write_transport.close()
        if saved is not None:
            _restore(saved)


@contextlib.asynccontextmanager
async def line_transport(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, lane: WireLane | None
) -> AsyncIterator[TransportStreams]:
    """The session's streams over JSON-RPC lines read from `reader` and written to `writer` (which
    the caller closes); `lane`: calls answered ahead of the session."""
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    out = _Out(writer, write_stream)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_pump_in, reader, to_session, out, lane)
        tg.start_soon(_pump_out, out, from_session)
        try:
            yield read_stream, write_stream
        finally:
            if lane is not None:
                with anyio.move_on_after(5, shield=True):  # its servers told of what it gives up
                    await lane.close()
            tg.cancel_scope.cancel()


class _Out:
    """Our stdout: whole messages, one at a time (the session's and the lane's answers share it)."""

    def __init__(self, writer: asyncio.StreamWriter, session: MemoryObjectSendStream[SessionMessage]) -> None:
        self._writer = writer
        self._session = session  # where the session writes: an answer queued there follows its messages
        self._lock = asyncio.Lock()

    async def write(self, pieces: Iterable[bytes | memoryview]) -> None:
        async with self._lock:
            for piece in pieces:
                self._writer.write(piece)
                await self._writer.drain()

    async def answer(self, message: types.JSONRPCResponse | types.JSONRPCError, quiet: bool) -> None:
        """An answer from the lane: written at once, or (when something was sent about its request)
        behind what the session has queued (a client that left needs none)."""
        with contextlib.suppress(ConnectionError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            if quiet:
                await self.write(json_line(message))
            else:
                await self._session.send(SessionMessage(message))


async def _pump_in(
    reader: asyncio.StreamReader,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    out: _Out,
    lane: WireLane | None,
) -> None:
    framer = LineFramer(_LIMIT)
    async with sink:
        while chunk := await reader.read(_CHUNK):
            lines = framer.feed(chunk)
            lines.reverse()
            while lines:  # each line let go once parsed (see `_deliver`)
                if not await _deliver(lines.pop(), sink, out, lane):
                    return
        last = framer.rest()
        if last is not None:
            await _deliver(last, sink, out, lane)


async def _deliver(
    line: bytes | Overlong,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    out: _Out,
    lane: WireLane | None,
) -> bool:
    """Hand one line to the lane or the session (False once the session is gone). A line that is not
    JSON-RPC becomes an error for the session; a line over the cap is answered here, with the id its
    beginning names."""
    if isinstance(line, Overlong):
        await out.write([_too_large(line.head)])
        return True
    if blank(line):
        return True
    message: SessionMessage | Exception
    value: Any = None
    try:
        value = parse_line(line)
        if lane is not None and lane.take(value, out.answer):
            return True
        message = SessionMessage(to_message(value))
    except ValueError as exc:
        answer = refusal(line, exc, value)
        if answer is not None:  # a request of the client's: refused by its id, so it need not wait
            await out.write([answer])
            return True
        message = exc
    del line  # a huge request's bytes go before the session takes its message on
    try:
        await sink.send(message)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    return True


_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def _too_large(head: bytes) -> bytes:
    """The error answer to a message over the cap: the request's id if its beginning names one."""
    found = _ID.search(head)
    request_id = json.loads(found.group(1)) if found else None
    return error_line(request_id, f"Message too large: over {_LIMIT >> 20} MiB; it was dropped")


async def _pump_out(out: _Out, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
    async with source:
        async for message in source:
            try:
                await out.write(json_line(message.message))
            except ConnectionError:
                return


def _divert() -> tuple[int, int]:
    """Point fd 0 at /dev/null and fd 1 at stderr; return duplicates to restore them later."""
    saved = (os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return saved


def _restore(saved: tuple[int, int]) -> None:
    for fd, copy in zip((0, 1), saved, strict=True):
        with contextlib.suppress(OSError):
            os.dup2(copy, fd)
        os.close(copy)
