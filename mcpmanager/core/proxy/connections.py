"""Client connections as the proxy keeps state about them: a key each, and word when one closes.

Some things hold per client connection (a handshake-era client's log level, its resource
subscriptions, the roots it said it has) and must go when the client goes: a client that left must
not keep a server at `debug`, keep a subscription alive, or have its folders offered to servers
working for someone else. Keys are handed out here (never `id()`, which Python reuses) and kept in
the SDK connection's own per-connection state; the connection's exit stack tells us it closed.
(A 2026-07-28 client has no connection beyond one request, so its state lives as long as that.)
"""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.session import ServerSession

from mcpmanager.core.sdk_compat import connection_of

logger = logging.getLogger(__name__)

_KEY = "mcpmanager.connection"
Forget = Callable[[int], Awaitable[None] | None]


class Connections:
    def __init__(self) -> None:
        self._keys = itertools.count(1)
        self._forgetters: list[Forget] = []

    def key(self, session: ServerSession) -> int:
        """The key of the connection `session` belongs to (the same for all its requests)."""
        connection: Any = connection_of(session)
        state = getattr(connection, "state", None)
        if not isinstance(state, dict):
            return id(connection)  # a connection without per-connection state: nothing better to key on
        key = state.get(_KEY)
        if not isinstance(key, int):
            key = state[_KEY] = next(self._keys)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.push_async_callback(self._closed, key)
        return key

    def on_close(self, forget: Forget) -> None:
        """Call `forget(key)` when a connection closes."""
        self._forgetters.append(forget)

    async def _closed(self, key: int) -> None:
        for forget in self._forgetters:
            try:
                done = forget(key)
                if inspect.isawaitable(done):
                    await done
            except Exception:  # one forgetter's bug must not keep the others' state
                logger.exception("forgetting connection %s failed", key)
