"""What clients asked of a server, kept across its restarts: the level of log messages to send, the
resources to report updates of, and word that the clients' roots changed.

A `Downstream` holds one; a new connection takes it all up again (`_resume`). A handshake-era
server is told with requests; a 2026-07-28 server has no logging/setLevel (each request opts in) and
follows resources through the filter of its listen stream (`listening`), reopened when the set
changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.config.servers import ServerConfig
from mcpmanager.core.supervisor.lifecycle import State, Status
from mcpmanager.core.supervisor.stderr_log import StderrLog


class ClientWishes:
    # Provided by the Downstream this is mixed into.
    _client: Client | None
    config: ServerConfig
    log: StderrLog

    @property
    def status(self) -> Status:
        raise NotImplementedError

    @property
    def start_timeout(self) -> float:
        raise NotImplementedError

    def __init__(self) -> None:
        self.subscriptions: set[str] = set()  # resource URIs some client subscribed to
        self.log_level: types.LoggingLevel | None = None  # what a client set; None: the server's default
        self._relisten = asyncio.Event()  # the subscription set changed: a new listen stream (modern)
        self._followed: frozenset[str] = frozenset()  # what the open listen stream follows (modern)
        self._listened = asyncio.Event()  # set each time a listen stream opens

    async def set_log_level(self, level: types.LoggingLevel) -> None:
        """The level of log messages to receive (kept for later connections too)."""
        self.log_level = level
        if (client := self._client) is not None and self.status.state is State.READY:
            with anyio.fail_after(self.start_timeout):
                await self._apply_log_level(client)

    async def _apply_log_level(self, client: Client) -> None:
        # Modern servers have no logging/setLevel: each request opts in (at "info", see the Client).
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        if self.log_level is not None and not modern and client.server_capabilities.logging is not None:
            request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=self.log_level))
            await client.session.send_request(request, types.EmptyResult)

    async def roots_changed(self) -> None:
        """Tell the server its client's roots changed (it asks for them again)."""
        client = self._client
        if client is not None and self.config.roots is None:
            await client.session.send_notification(types.RootsListChangedNotification())

    async def subscribe(self, uri: str, subscribed: bool) -> None:
        """Follow (or stop following) updates of `uri` on this server."""
        if (uri in self.subscriptions) == subscribed:
            return
        (self.subscriptions.add if subscribed else self.subscriptions.discard)(uri)
        client = self._client
        if client is None:
            return  # the set is applied when it is ready (modern) or was never sent (handshake era)
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # A new listen stream with the new filter; wait (bounded) until the server has
            # acknowledged it, so an update right after the client's subscribe is not missed.
            self._listened.clear()
            self._relisten.set()
            with anyio.move_on_after(self.start_timeout):
                while (uri in self._followed) != subscribed:
                    await self._listened.wait()
                    self._listened.clear()
        else:
            await _subscribe(client, uri, subscribed)

    async def _resume(self, client: Client) -> None:
        """A new connection takes up what clients asked of the last one: the log level and, in the
        handshake era, the resource subscriptions (modern ones ride on the listen stream). Each step is
        bounded: the start deadline no longer holds, and a server must not hang in "starting"."""
        steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("the log level", lambda: self._apply_log_level(client))
        ]
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            for uri in sorted(self.subscriptions):
                steps.append((f"the subscription to {uri}", lambda uri=uri: _subscribe(client, uri, True)))  # type: ignore[misc]
        for what, step in steps:
            try:
                with anyio.fail_after(self.start_timeout):
                    await step()
            except (MCPError, TimeoutError) as exc:
                self.log.note(f"restoring {what} failed: {exc or 'timed out'}")

    def _listening(self, followed: frozenset[str]) -> None:
        self._followed = followed
        self._listened.set()


async def _subscribe(client: Client, uri: str, subscribed: bool) -> None:
    """resources/subscribe or /unsubscribe (handshake era; the SDK's helpers for them warn)."""
    request: types.SubscribeRequest | types.UnsubscribeRequest
    if subscribed:
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
    else:
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
    await client.session.send_request(request, types.EmptyResult)
