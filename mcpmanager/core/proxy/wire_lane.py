"""The fast lane ahead of the SDK's session, for a handshake-era client's connection.

The fast lane (`fast_lane`) answers a plain tools/call inside the SDK's server, which still parses
each request into a message model, relays it through its memory streams, spawns a task for it,
builds its context and writes its answer back the same way: about half of what a proxied call costs
mcpmanager on a pipe, more over HTTP. So the transports ask a `WireLane` (one per client
connection) about each request they read before handing it to the session: a call the lane takes
is answered from here, through the transport's `Answer`; anything else (and any call the lane
declines, decided at once so nothing overtakes it) goes to the session as before. A client's
`notifications/cancelled` for a call answered here cancels it here (ids matched as the SDK
matches them), and the call then ends as the transport ends a cancelled request of the session's
(`unanswered`: over HTTP an error ends its POST; on a pipe nothing goes back). A call that fails
here for a reason of mcpmanager's own gets the error the SDK's dispatcher gives a handler that raised.

A call taken here is the same call the middleware lane makes: same admission, same activity, same
in-flight bookkeeping. What the server asks or logs during the call reaches this client the way
the SDK's own request session sends it (on HTTP, on the call's own POST: `request_session`). That
needs the SDK's connection, so the lane opens once the session has handled a request of this
client's (its `initialize`), and takes calls once the handshake is done: `adopt`, a
middleware, finds the lane of the request it sees (the stdio transport's, set in the serving
context; an HTTP session's, put in the request's scope by its transport). A 2026-07-28 client
(each request its own envelope) is left to the session and its middleware lane.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.proxy.fast_lane import Admitted, FastLane, Remember
from mcpmanager.core.sdk_compat import all_sent, connection_of, done_with, request_session

logger = logging.getLogger(__name__)

# Writes one response message to the client; `quiet`: nothing else was sent about the request, so
# nothing about it can still be on its way (the answer need not queue behind the session's messages).
Answer = Callable[[types.JSONRPCResponse | types.JSONRPCError, bool], Awaitable[None]]
SCOPE_KEY = "mcpmanager.wire_lane"  # an HTTP request's scope: the lane of the session it belongs to
_SERVING: ContextVar[WireLane | None] = ContextVar("mcpmanager.wire_lane", default=None)
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


class WireLane:
    def __init__(self, lane: FastLane, server: Server[Any], meta_tools: bool, remember: Remember) -> None:
        self._lane = lane
        self._server = server
        self._meta_tools = meta_tools
        self._remember = remember
        self._connection: object = None  # the client's connection, once `adopt` saw it
        self._lifespan: Any = None
        self._running: dict[types.RequestId, asyncio.Task[None]] = {}  # by `coerce_request_id`, as the SDK keys
        self._cancelled: set[types.RequestId] = set()  # ... those the client cancelled
        self._closed = False
        # How the transport ends a call its client cancelled (HTTP: the SDK's transport answers such
        # a request with an error, so its POST ends); None: nothing goes back, as on a pipe.
        self.unanswered: Callable[[types.RequestId], Awaitable[None]] | None = None

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """The lane of the one client served in this context (the stdio transport's)."""
        token = _SERVING.set(self)
        try:
            yield
        finally:
            _SERVING.reset(token)

    def take(self, message: object, answer: Answer, request: object = None) -> bool:
        """Whether this message (a parsed request or notification from the client) is handled here:
        a tools/call the lane takes (answered through `answer` when done) or the cancellation of
        one. `request`: the HTTP request it came in (whose team token the activity log names)."""
        try:
            return self._take(message, answer, request)
        except Exception:  # boundary: a bug of the lane's leaves the message to the session, not the client stranded
            logger.exception("the wire lane failed on a message; the session takes it")
            return False

    def _take(self, message: object, answer: Answer, request: object) -> bool:
        if self._closed or type(message) is not dict:
            return False
        method = message.get("method")
        if method == "tools/call":
            return self._call(message, answer, request)
        if method == "notifications/cancelled":
            params = message.get("params")
            found = as_request_id(params.get("requestId")) if type(params) is dict else None
            key = coerce_request_id(found) if found is not None else None
            task = self._running.get(key) if key is not None else None
            if key is None or task is None:
                return False  # (the session's, or nobody's: it drops what it cannot match)
            self._cancelled.add(key)
            task.cancel()
            return True
        return False

    def _call(self, message: dict[str, Any], answer: Answer, request: object) -> bool:
        connection = self._connection
        request_id = message.get("id")
        params = message.get("params")
        if (
            connection is None
            or message.get("jsonrpc") != "2.0"
            or not _REQUEST_KEYS.issuperset(message)
            or type(request_id) not in (int, str)
            or type(params) is not dict
            or params.get("_meta")  # an envelope, a progress token, anything to read: the session's
            or "tools/call" in self._server.cache_hints  # (the SDK's server adds them to the result)
        ):
            return False
        assert request_id is not None
        key = coerce_request_id(request_id)
        if key in self._running:
            return False
        session = request_session(connection, request_id)
        if session is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return False
        ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
            session=session,
            lifespan_context=self._lifespan,
            protocol_version=session.protocol_version,
            method="tools/call",
            params=params,
            request_id=request_id,
            request=request,
        )
        taken = self._lane.admit(ctx, self._meta_tools)
        if taken is None:
            return False
        self._lane.ahead += 1
        task = asyncio.get_running_loop().create_task(self._answer(ctx, taken, key, answer))
        self._running[key] = task
        return True

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], taken: Admitted, key: types.RequestId, answer: Answer
    ) -> None:
        request_id = ctx.request_id
        assert request_id is not None
        message: types.JSONRPCResponse | types.JSONRPCError
        try:
            result = await self._lane.run(ctx, taken, self._remember)
            quiet = not await all_sent(ctx.session)  # what the server logged before answering goes first
            message = types.JSONRPCResponse.model_construct(jsonrpc="2.0", id=request_id, result=result)
        except asyncio.CancelledError:
            if key not in self._cancelled or self.unanswered is None:
                raise
            with contextlib.suppress(Exception):  # (the session ended meanwhile)
                await self.unanswered(request_id)
            return
        except MCPError as exc:  # an error the spec defines (the lane raises only those): as it came
            quiet = not await all_sent(ctx.session)
            message = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=exc.error)
        except Exception as exc:  # a bug here is the client's error, in the words the SDK's dispatcher uses
            logger.exception("call %r on the wire lane failed", request_id)
            quiet, message = False, types.JSONRPCError(jsonrpc="2.0", id=request_id, error=_failed(exc))
        finally:
            self._running.pop(key, None)
            self._cancelled.discard(key)
            done_with(ctx.session)
        await answer(message, quiet)

    async def close(self) -> None:
        """The client is gone: no more calls, and those still running are cancelled (their servers
        told), as the session cancels its own."""
        self._closed = True
        running = list(self._running.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def adopt(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Learn the client's connection from a request of its (calls are admitted only once its
        handshake is done: `FastLane.admit`)."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._connection = connection_of(ctx.session)
            self._lifespan = ctx.lifespan_context


async def adopt(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A middleware: the lane of the connection a request came on learns that connection."""
    lane: WireLane | None
    if ctx.request is not None:  # over HTTP: the lane of the request's session
        scope = getattr(ctx.request, "scope", None)
        lane = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    else:
        lane = _SERVING.get()
    if lane is not None and lane._connection is None:
        lane.adopt(ctx)
    return await call_next(ctx)


def _failed(exc: Exception) -> types.ErrorData:
    # Code 0, as the SDK's dispatcher answers a handler that raised (its own compatibility choice).
    return types.ErrorData(code=0, message=str(exc))
