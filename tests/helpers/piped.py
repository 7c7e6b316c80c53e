"""A client of the engine over a pair of pipes, served by the code `serve --stdio` runs (its pipe
transport and the fast lane ahead of the SDK's session), in this process: the engine's counters can
be read, and the client is the SDK's own."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve.stdio import serve_stdio, stdio_transport

VIAS = ("memory", "pipe")  # the SDK's in-memory transport (the middleware lane) or `serve --stdio`'s
PIPED: set[int] = set()  # id() of the clients on a pipe


@asynccontextmanager
async def connected(engine: Engine, via: str, **options: Any) -> AsyncIterator[Client]:
    """An SDK client of the engine's server, `via` memory or a pipe (`options`: the Client's)."""
    if via == "memory":
        async with Client(engine.router.server, **options) as client:
            yield client
        return
    to_engine, from_engine = os.pipe(), os.pipe()
    for fd in (*to_engine, *from_engine):
        os.set_blocking(fd, False)
    served = anyio.Event()

    async def serve() -> None:
        try:
            await serve_stdio(engine.router, (to_engine[0], from_engine[1]))
        finally:
            served.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        transport = stdio_transport(None, (from_engine[0], to_engine[1]))
        async with Client(transport, **options) as client:
            PIPED.add(id(client))
            try:
                yield client
            finally:
                PIPED.discard(id(client))
        # The client's end closed: the engine reads end of input and stops serving, as `serve --stdio` does.
        with anyio.fail_after(10):
            await served.wait()
