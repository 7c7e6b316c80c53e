"""The fast lane ahead of the SDK's session, for one handshake-era client on a duplex pipe.

The fast lane (`fast_lane`) answers a plain tools/call inside the SDK's server, which still parses
each request into a message model, relays it through two memory streams, spawns a task for it,
builds its context and writes its answer back through the same streams: about half of what a
proxied call costs mcpmanager. Where one client is served on a pipe (`serve --stdio`), the
transport asks the `WireLane` about each request it reads before handing it to the session: a
call the lane takes is answered from here, its response written by the transport; anything else
(and any call the lane declines, decided at once so nothing overtakes it) goes to the session as
before. A client's `notifications/cancelled` for a call answered here cancels it here.

A call taken here is the same call the middleware lane makes: same admission, same activity,
same in-flight bookkeeping (what the server asks or logs during the call reaches this client
through the connection, which on a pipe is the same wire as the request's). It needs the SDK's
connection for that, so the lane opens once the session has handled a request of this client's
(a client lists tools before calling them) and the handshake is done. A 2026-07-28 client (each
request its own envelope) is left to the session and its middleware lane.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any, cast

from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.proxy.fast_lane import Admitted, FastLane, Remember
from mcpmanager.core.sdk_compat import connection_of

Answer = Callable[[dict[str, Any]], Awaitable[None]]  # writes one response message to the client
_SERVING: ContextVar[WireLane | None] = ContextVar("mcpmanager.wire_lane", default=None)
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


class WireLane:
    def __init__(self, lane: FastLane, server: Server[Any], meta_tools: bool, remember: Remember) -> None:
        self._lane = lane
        self._server = server
        self._meta_tools = meta_tools
        self._remember = remember
        self._session: ServerSession | None = None  # the client's connection as a session (`_adopt`)
        self._lifespan: Any = None
        self._running: dict[int | str, asyncio.Task[None]] = {}

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """While serving the one client: the session's requests in this context show the lane its
        connection (a middleware, first in the chain)."""
        token = _SERVING.set(self)
        self._server.middleware.insert(0, self._adopt)
        try:
            yield
        finally:
            self._server.middleware.remove(self._adopt)
            _SERVING.reset(token)

    async def _adopt(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if self._session is None and _SERVING.get() is self and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            connection = connection_of(ctx.session)
            if isinstance(connection, Connection):
                # The connection is both channels: on a pipe, what relates to a request rides the same wire.
                self._session = ServerSession(cast(Any, connection), connection)
                self._lifespan = ctx.lifespan_context
        return await call_next(ctx)

    def take(self, message: object, answer: Answer) -> bool:
        """Whether this message (a parsed line from the client) is handled here: a tools/call the
        lane takes (answered through `answer` when done) or the cancellation of one."""
        if type(message) is not dict:
            return False
        method = message.get("method")
        if method == "tools/call":
            return self._call(message, answer)
        if method == "notifications/cancelled":
            params = message.get("params")
            task = self._running.get(params.get("requestId")) if type(params) is dict else None  # type: ignore[arg-type]
            if task is None:
                return False
            task.cancel()  # as the SDK does for its own: no answer goes back
            return True
        return False

    def _call(self, message: dict[str, Any], answer: Answer) -> bool:
        session = self._session
        request_id = message.get("id")
        params = message.get("params")
        if (
            session is None
            or session.protocol_version in MODERN_PROTOCOL_VERSIONS
            or message.get("jsonrpc") != "2.0"
            or not _REQUEST_KEYS.issuperset(message)
            or type(request_id) not in (int, str)
            or request_id in self._running
            or type(params) is not dict
            or params.get("_meta")  # an envelope, a progress token, anything to read: the session's
        ):
            return False
        ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
            session=session,
            lifespan_context=self._lifespan,
            protocol_version=session.protocol_version,
            method="tools/call",
            params=params,
            request_id=request_id,
        )
        taken = self._lane.admit(ctx, self._meta_tools)
        if taken is None:
            return False
        assert request_id is not None
        self._lane.ahead += 1
        task = asyncio.get_running_loop().create_task(self._answer(ctx, taken, request_id, answer))
        self._running[request_id] = task
        return True

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], taken: Admitted, request_id: int | str, answer: Answer
    ) -> None:
        try:
            result = await self._lane.run(ctx, taken, self._remember)
        finally:
            self._running.pop(request_id, None)
        await answer({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def close(self) -> None:
        """The client is gone: calls still running are cancelled (their servers told), as the
        session cancels its own."""
        running = list(self._running.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
