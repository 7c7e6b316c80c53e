"""Reaching a remote server: Streamable HTTP or SSE, with the config's headers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.sdk_compat import Transport, TransportStreams, mcp_http_client


def remote_transport(config: HttpServerConfig) -> Transport:
    if config.transport == "sse":
        return sse_client(config.url, headers=dict(config.headers))
    return _streamable_http(config)


@contextlib.asynccontextmanager
async def _streamable_http(config: HttpServerConfig) -> AsyncIterator[TransportStreams]:
    http = mcp_http_client(headers=dict(config.headers))
    async with http, streamable_http_client(config.url, http_client=http) as streams:
        yield streams
