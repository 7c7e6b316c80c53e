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
context; an HTTP session's, put in the request's scope by its transport).

A 2026-07-28 client on a pipe has no handshake: each request carries its own envelope (protocol
version, capabilities, client info, log level) and gets its own born-ready connection. The lane
learns the stream's notify-only outbound from the first request the session handles, and then
takes a plain call whose `_meta` holds only the envelope and trace context: the envelope checked
as the SDK's modern loop checks it (its classification ladder, then the surface validation of the
params; anything it would refuse goes to the session, which refuses it), the call's session built
as that loop builds one (the envelope's capabilities, which the call's server is told, and the
request's log-level opt-in), its answer finished as the SDK's server finishes a handler's.

A 2026-07-28 client over HTTP sends each request in a POST of its own, with no session: one lane
per mode sees those POSTs (`serve/modern_first`), the same checks made, the call's session built
for the POST (`exchange`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, cast

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import modern_error_data
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
from mcp_types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.proxy.fast_lane import Admitted, FastLane, Remember, stamped
from mcpmanager.core.proxy.trace_context import TRACE_KEYS
from mcpmanager.core.sdk_compat import (
    Deliver,
    all_sent,
    close_enveloped,
    connection_of,
    done_with,
    enveloped_session,
    exchange_session,
    modern_outbound,
    request_session,
)

logger = logging.getLogger(__name__)

Message = types.JSONRPCResponse | types.JSONRPCError
# A 2026-07-28 call's session (its request id, protocol version, envelope), or None: not taken.
SessionFor = Callable[[types.RequestId, str, dict[str, Any]], "ServerSession | None"]
# Writes one response message to the client; `quiet`: nothing else was sent about the request, so
# nothing about it can still be on its way (the answer need not queue behind the session's messages).
Answer = Callable[[types.JSONRPCResponse | types.JSONRPCError, bool], Awaitable[None]]
SCOPE_KEY = "mcpmanager.wire_lane"  # an HTTP request's scope: the lane of the session it belongs to
_SERVING: ContextVar[WireLane | None] = ContextVar("mcpmanager.wire_lane", default=None)
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
# What a 2026-07-28 call's `_meta` may hold for the lane to take it: the envelope, trace context.
_ENVELOPE_KEYS = frozenset(
    {
        types.PROTOCOL_VERSION_META_KEY,
        types.CLIENT_INFO_META_KEY,
        types.CLIENT_CAPABILITIES_META_KEY,
        types.LOG_LEVEL_META_KEY,
        *TRACE_KEYS,
    }
)


class Exchange:
    """A 2026-07-28 HTTP call the lane took: its context and what `FastLane.admit` decided."""

    __slots__ = ("ctx", "taken")

    def __init__(self, ctx: ServerRequestContext[Any, Any], taken: Admitted) -> None:
        self.ctx = ctx
        self.taken = taken


class WireLane:
    def __init__(self, lane: FastLane, server: Server[Any], meta_tools: bool, remember: Remember) -> None:
        self._lane = lane
        self._server = server
        self._meta_tools = meta_tools
        self._remember = remember
        self._connection: object = None  # the client's connection, once `adopt` saw it
        self._outbound: object = None  # ... or a 2026-07-28 client's stream outbound (`modern_outbound`)
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
        request_id = message.get("id")
        params = message.get("params")
        if (
            message.get("jsonrpc") != "2.0"
            or not _REQUEST_KEYS.issuperset(message)
            or type(request_id) not in (int, str)
            or type(params) is not dict
            or "tools/call" in self._server.cache_hints  # (the SDK's server adds them to the result)
        ):
            return False
        assert request_id is not None
        key = coerce_request_id(request_id)
        if key in self._running:
            return False
        ctx = self._handshaken(params, request_id, request) or self._enveloped(params, request_id, request, self._piped)
        if ctx is None:
            return False
        taken = self._lane.admit(ctx, self._meta_tools)
        if taken is None:  # (a 2026-07-28 call's connection has nothing to unwind: nothing ran on it)
            return False
        self._lane.ahead += 1
        task = asyncio.get_running_loop().create_task(self._answer(ctx, taken, key, answer))
        self._running[key] = task
        return True

    def _handshaken(
        self, params: dict[str, Any], request_id: types.RequestId, request: object
    ) -> ServerRequestContext[Any, Any] | None:
        """The context of a handshake-era client's call without `_meta` (a progress token, anything
        to read there: the session's), as the SDK's dispatcher would build it."""
        connection = self._connection
        if connection is None or params.get("_meta"):
            return None
        session = request_session(connection, request_id)
        if session is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        return ServerRequestContext(
            session=session,
            lifespan_context=self._lifespan,
            protocol_version=session.protocol_version,
            method="tools/call",
            params=params,
            request_id=request_id,
            request=request,
        )

    def _piped(self, request_id: types.RequestId, version: str, meta: dict[str, Any]) -> ServerSession | None:
        """A pipe's 2026-07-28 call's session, on the stream's notify-only outbound."""
        outbound = self._outbound
        return None if outbound is None else enveloped_session(outbound, request_id, version, meta)

    def _enveloped(
        self,
        params: dict[str, Any],
        request_id: types.RequestId,
        request: object,
        session_for: SessionFor,
        lifespan: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> ServerRequestContext[Any, Any] | None:
        """The context of a 2026-07-28 client's call whose `_meta` is its envelope (and trace
        context), checked and built as the SDK's modern entries do (`headers`: an HTTP request's,
        checked against the envelope as its entry checks them); None for anything they would
        refuse or that asks more of `_meta` (a progress token: the session's)."""
        meta = params.get("_meta")
        if type(meta) is not dict or not _ENVELOPE_KEYS.issuperset(meta):
            return None
        route = classify_inbound_request({"method": "tools/call", "params": params}, headers=headers)
        if isinstance(route, InboundLadderRejection):
            return None
        version = route.protocol_version
        try:
            validate_client_request("tools/call", version, params)
        except (ValueError, KeyError):  # (pydantic's ValidationError is a ValueError)
            return None
        session = session_for(request_id, version, meta)
        if session is None:
            return None
        return ServerRequestContext(
            session=session,
            lifespan_context=self._lifespan if lifespan is None else lifespan,
            protocol_version=version,
            method="tools/call",
            params=params,
            request_id=request_id,
            meta=cast(Any, meta),
            request=request,
        )

    def exchange(
        self,
        params: object,
        request_id: object,
        request: object,
        deliver: Deliver,
        lifespan: Any,
        headers: Mapping[str, str],
    ) -> Exchange | None:
        """A 2026-07-28 HTTP client's call, which came in a POST of its own (`serve/modern_first`),
        with these (lowercase) `headers`, when the lane takes it (decided at once); what the server
        sends about it goes to `deliver`.
        Its answer: `answer_exchange`. (Such calls are no connection's, so they are not kept by id:
        the client cancels one by closing its POST.)"""
        if self._closed or type(params) is not dict or type(request_id) not in (int, str):
            return None
        if "tools/call" in self._server.cache_hints:  # (the SDK's server adds them to the result)
            return None
        assert isinstance(request_id, int | str)

        def session_for(request_id: types.RequestId, version: str, meta: dict[str, Any]) -> ServerSession:
            return exchange_session(deliver, request_id, version, meta)

        ctx = self._enveloped(params, request_id, request, session_for, lifespan, headers)
        if ctx is None:
            return None
        taken = self._lane.admit(ctx, self._meta_tools)
        if taken is None:
            return None
        self._lane.ahead += 1
        return Exchange(ctx, taken)

    async def answer_exchange(self, exchange: Exchange) -> Message:
        """The answer to a call `exchange` took (CancelledError when it is cancelled)."""
        message, _ = await self._outcome(exchange.ctx, exchange.taken)
        return message

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], taken: Admitted, key: types.RequestId, answer: Answer
    ) -> None:
        try:
            message, quiet = await self._outcome(ctx, taken)
        except asyncio.CancelledError:
            if key not in self._cancelled or self.unanswered is None:
                raise
            assert ctx.request_id is not None
            with contextlib.suppress(Exception):  # (the session ended meanwhile)
                await self.unanswered(ctx.request_id)
            return
        finally:
            self._running.pop(key, None)
            self._cancelled.discard(key)
        await answer(message, quiet)

    async def _outcome(self, ctx: ServerRequestContext[Any, Any], taken: Admitted) -> tuple[Message, bool]:
        """A taken call's answer, and whether nothing else was sent about the call."""
        request_id = ctx.request_id
        assert request_id is not None
        try:
            result = stamped(self._server, ctx.protocol_version, await self._lane.run(ctx, taken, self._remember))
            quiet = not await all_sent(ctx.session)  # what the server logged before answering goes first
            return types.JSONRPCResponse.model_construct(jsonrpc="2.0", id=request_id, result=result), quiet
        except MCPError as exc:  # an error the spec defines (the lane raises only those): as it came
            quiet = not await all_sent(ctx.session)
            return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=exc.error), quiet
        except Exception as exc:  # a bug here is the client's error, in the words the SDK's dispatcher uses
            logger.exception("call %r on the wire lane failed", request_id)
            modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            error = modern_error_data(exc) if modern else _failed(exc)
            return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error), False
        finally:
            done_with(ctx.session)
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await close_enveloped(ctx.session)

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
        elif ctx.request is None:  # a pipe's 2026-07-28 client (over HTTP each request stands alone)
            self._outbound = modern_outbound(ctx.session)
            self._lifespan = ctx.lifespan_context


async def adopt(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A middleware: the lane of the connection a request came on learns that connection."""
    lane: WireLane | None
    if ctx.request is not None:  # over HTTP: the lane of the request's session
        scope = getattr(ctx.request, "scope", None)
        lane = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    else:
        lane = _SERVING.get()
    if lane is not None and lane._connection is None and lane._outbound is None:
        lane.adopt(ctx)
    return await call_next(ctx)


def _failed(exc: Exception) -> types.ErrorData:
    # Code 0, as the SDK's dispatcher answers a handler that raised (its own compatibility choice).
    return types.ErrorData(code=0, message=str(exc))
