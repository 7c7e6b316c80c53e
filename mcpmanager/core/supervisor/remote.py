"""Reaching a remote server: Streamable HTTP or SSE, with the config's headers, or signed in with
OAuth (`core/auth`) unless a fixed Authorization header is configured.

`config` comes with its `${keyring:…}` references already filled (`filled`, at each start)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from mcpmanager.core.auth.provider import engine_auth
from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.sdk_compat import Transport, TransportStreams, mcp_http_client
from mcpmanager.core.vault.store import Vault


def remote_transport(config: HttpServerConfig, vault: Vault | None = None) -> Transport:
    auth = engine_auth(config, vault or Vault())
    if config.transport == "sse":
        return sse_client(config.url, headers=dict(config.headers), auth=auth)
    return _streamable_http(config, auth)


@contextlib.asynccontextmanager
async def _streamable_http(config: HttpServerConfig, auth: httpx2.Auth | None) -> AsyncIterator[TransportStreams]:
    http = mcp_http_client(headers=dict(config.headers), auth=auth)
    async with http, streamable_http_client(config.url, http_client=http) as streams:
        yield streams
