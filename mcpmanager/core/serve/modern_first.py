"""A 2026-07-28 client's plain tools/call over HTTP, answered ahead of the SDK's entry for that era.

A 2026-07-28 request is a POST of its own: no session, its envelope in `params._meta`. The SDK's
entry for it builds a Starlette request and response, checks it, starts a task group with the
handler and a watcher for the client going away, and runs the server's whole request kernel for it;
nearly every call is a plain tools/call that mcpmanager's fast lane answers from inside that kernel
anyway. So a POST is read here first: one that is such a call, and that passes every check the
SDK's entry makes (content type, accepted types, one JSON-RPC request, no routing header twice, the
envelope's ladder against the routing headers, the called tool's `Mcp-Param-*` headers against its
schema), is answered by the wire lane (`WireLane.exchange`). Anything else, a call the lane
declines included, goes to the SDK's entry as it came (the body replayed), which answers or refuses
it as before.

The answer is what the SDK's entry would send: JSON (an error with the status its table gives),
unless the server sends something about the call first (a log message the request opted in to),
which opens an SSE stream carrying it, the rest, and the answer; a call silent for `PING` seconds
gets that stream too, pinged so that a proxy's idle timeout does not close it. The client going
away cancels the call (the server is told), as the era defines cancellation over HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pydantic_core
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from mcpmanager.core.proxy.wire_lane import Exchange, WireLane

PING = 15.0  # seconds of silence before a call's answer becomes a pinged stream (the SDK's entry's own)
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAM_PREFIX = b"mcp-param-"
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]


async def answered(
    lane: WireLane, server: Any, lifespan: Any, scope: Scope, receive: Receive, send: Send
) -> Receive | None:
    """None when the lane answered this POST; else the `receive` to hand it on with. `server`: the
    mode's SDK server (the tools' schemas for the `Mcp-Param-*` check); `lifespan`: its state."""
    if scope["method"] != "POST":
        return receive
    request = Request(scope, receive)
    headers = request.headers
    if not headers.get("content-type", "").lower().startswith("application/json"):
        return receive
    if not all(check_accept_headers(request)):  # JSON and SSE both (the SDK's entry answers the rest 406)
        return receive
    messages: list[Message] = []

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    body = b""
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return replay
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    taken = _exchange(lane, server, lifespan, request, body, send)
    if taken is None:
        return replay
    exchange, deliver = taken
    await _answer(lane, exchange, deliver, receive)
    return None


def _exchange(
    lane: WireLane, server: Any, lifespan: Any, request: Request, body: bytes, send: Send
) -> tuple[Exchange, _Reply] | None:
    """The call the lane takes from this body, checked as the SDK's entry checks it; None for the entry."""
    try:
        decoded = pydantic_core.from_json(body)
    except ValueError:
        return None
    if type(decoded) is not dict or decoded.get("method") != "tools/call" or not _REQUEST_KEYS.issuperset(decoded):
        return None
    if decoded.get("jsonrpc") != "2.0" or "id" not in decoded:
        return None
    headers = request.headers
    if find_duplicated_routing_header(headers.items()) is not None:  # (the envelope's ladder: the lane's)
        return None
    params = decoded.get("params")
    if type(params) is not dict:
        return None
    arguments = params.get("arguments")
    # (no values and no `Mcp-Param-*` headers: nothing to check)
    if arguments or any(k.startswith(_PARAM_PREFIX) for k, _ in request.scope["headers"]):
        if type(arguments) is not dict and arguments is not None:
            return None
        lookup = server.get_tool_input_schema
        try:
            schema = lookup(params.get("name")) if lookup is not None else None
        except Exception:  # (the SDK's entry skips the check then: so does it here, for the entry)
            return None
        if schema is None:
            return None  # (no schema to check against: the entry decides as it does)
        if validate_mcp_param_headers(schema, arguments or {}, headers) is not None:
            return None  # (refused: the entry says why)
    reply = _Reply(send)
    exchange = lane.exchange(params, decoded["id"], request, reply.notify, lifespan, dict(headers))
    return None if exchange is None else (exchange, reply)


async def _answer(lane: WireLane, exchange: Exchange, reply: _Reply, receive: Receive) -> None:
    """Run the call, its POST going away cancelling it; then answer it."""
    me = asyncio.current_task()
    assert me is not None
    loop = asyncio.get_running_loop()
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        me.cancel()

    watcher = loop.create_task(watch())
    pinging = loop.call_later(PING, reply.keep_alive)
    try:
        message = await lane.answer_exchange(exchange)
    except asyncio.CancelledError:
        if not gone:
            raise
        me.uncancel()  # the client closed its POST: the call is cancelled, and nobody is left to answer
        return
    finally:
        watcher.cancel()
        pinging.cancel()
    await reply.finish(message)


class _Reply:
    """The POST's answer: JSON, or an SSE stream once anything but the answer is sent on it."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self._streaming = False
        self._done = False
        self._lock = asyncio.Lock()  # one writer at a time once it streams (a notification, a ping)
        self._pings: asyncio.Task[None] | None = None

    async def notify(self, note: types.JSONRPCNotification) -> None:
        if not self._done:
            await self._event(_event(note))

    def keep_alive(self) -> None:
        """(A timer's callback) the call was silent for `PING` seconds: stream, and ping."""
        if not self._done:
            self._pings = asyncio.get_running_loop().create_task(self._ping())

    async def _ping(self) -> None:
        while not self._done:
            await self._event(b": ping\r\n\r\n")
            await asyncio.sleep(PING)

    async def _event(self, data: bytes) -> None:
        async with self._lock:
            if self._done:
                return
            if not self._streaming:
                self._streaming = True
                await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def finish(self, message: types.JSONRPCResponse | types.JSONRPCError) -> None:
        if self._pings is not None:
            self._pings.cancel()
        async with self._lock:
            self._done = True
            if self._streaming:
                await self.send({"type": "http.response.body", "body": _event(message), "more_body": False})
                return
            body = message.model_dump_json(by_alias=True, exclude_none=True).encode()
            status = 200
            if isinstance(message, types.JSONRPCError):
                status = ERROR_CODE_HTTP_STATUS.get(message.error.code, 200)
            headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
            await self.send({"type": "http.response.start", "status": status, "headers": headers})
            await self.send({"type": "http.response.body", "body": body})


def _event(message: types.JSONRPCResponse | types.JSONRPCError | types.JSONRPCNotification) -> bytes:
    data = message.model_dump_json(by_alias=True, exclude_none=True)
    return f"event: message\r\ndata: {data}\r\n\r\n".encode()
