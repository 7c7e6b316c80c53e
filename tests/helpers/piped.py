"""A client of the engine in this process (so its counters can be read), the SDK's own: over the
SDK's in-memory transport, over a pair of pipes served by the code `serve --stdio` runs, or over
HTTP served by the code `serve --http` runs (both with the fast lane ahead of the SDK's session)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve.http import serve_http
from mcpmanager.core.serve.stdio import serve_stdio, stdio_transport
from tests.helpers.engines import wait_for

TOKEN = "t0ken"

VIAS = ("memory", "pipe", "http")  # the in-memory transport (the middleware lane) or a `serve` one
PIPED: set[int] = set()  # id() of the clients on a pipe or HTTP


@asynccontextmanager
async def connected(engine: Engine, via: str, **options: Any) -> AsyncIterator[Client]:
    """An SDK client of the engine's server, `via` memory or a pipe (`options`: the Client's)."""
    if via == "memory":
        async with Client(engine.router.server, **options) as client:
            yield client
        return
    if via == "http":
        async with over_http(engine, **options) as client:
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


@asynccontextmanager
async def over_http(engine: Engine, **options: Any) -> AsyncIterator[Client]:
    urls: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, engine.router, 0, urls.append, token=TOKEN))
        await wait_for(lambda: bool(urls), 10)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            Client(streamable_http_client(urls[0], http_client=http), **options) as client,
        ):
            PIPED.add(id(client))
            try:
                yield client
            finally:
                PIPED.discard(id(client))
        tg.cancel_scope.cancel()
