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
    async with (
        engine_on_pipes(engine) as (read, write),
        Client(stdio_transport(None, (read, write)), **options) as client,
    ):
        PIPED.add(id(client))
        try:
            yield client
        finally:
            PIPED.discard(id(client))


@asynccontextmanager
async def engine_on_pipes(engine: Engine) -> AsyncIterator[tuple[int, int]]:
    """`serve_stdio` on a pair of pipes, in this process: the client's ends (read, write), which the
    caller owns. Closing the write end is end of input: leaving waits for the engine to stop serving."""
    to_engine, from_engine = os.pipe(), os.pipe()
    served = anyio.Event()

    async def serve() -> None:
        try:
            await serve_stdio(engine.router, (to_engine[0], from_engine[1]))
        finally:
            served.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        yield from_engine[0], to_engine[1]
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
