"""Streamable HTTP that answers a request with plain JSON unless the request needs a stream.

The SDK answers every request POST of a handshake-era session with an SSE stream, or (in its JSON
mode) every one with a JSON body, dropping what a server sends during a request (log messages,
progress, a server's own question). A stream costs both ends a great deal for the one message
nearly every request gets back: a task group, a ping task and memory streams here, a chunked body
and an event parser at the client. Measured on the benchmark's echo server with the SDK's client:
1.6 ms a call with SSE answers, 0.9 ms with JSON.

So a request is dispatched as for SSE (the server may send it anything), and its answer waits for
the first message meant for it: the response itself, as nearly always, goes back as JSON; anything
else first opens the SSE stream, with that message as its first event and the rest following,
exactly as the SDK would have streamed it. A call that stays silent for `QUIET` seconds gets its
stream then, so that the stream's pings keep the connection alive as they did before. Whatever
this does not handle (notifications, responses, `initialize`, an event store, a client that does
not accept both types, anything malformed) is the SDK's own handling, unchanged.

This builds on the inside of the SDK's transport and session manager, reached through
`sdk_compat` (`HttpTransport`, `HttpSessions`: `tests/core/test_sdk_compat.py` fails when an
upgrade moves a part).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from functools import partial
from http import HTTPStatus
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.streamable_http import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    SSEEvent,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import SessionMessage
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from mcpmanager.core.proxy.wire_lane import SCOPE_KEY, WireLane
from mcpmanager.core.sdk_compat import HttpSessions, HttpTransport, adopt_transport
from mcpmanager.core.serve.modern_first import answered

logger = logging.getLogger(__name__)

# Seconds a request waits for its first message before its answer becomes a stream anyway: the
# stream's pings (every 15 s) keep a long, silent call's connection from looking dead to the
# client's read timeout or to a proxy.
QUIET = 10.0


class JsonFirstTransport(HttpTransport):
    wire_lane: WireLane | None = None  # the session's fast lane ahead of the SDK's session (`JsonFirstSessions`)

    async def handle_post(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
        lane = self.wire_lane
        if lane is not None:
            scope[SCOPE_KEY] = lane  # what the session handles shows the lane its connection (`wire_lane.adopt`)
        raw = await self._body(request)
        if lane is not None and raw is not None and await self._ahead(lane, raw, scope, request, receive, send):
            return
        message = _plain_request(raw)
        if message is None:
            await self.sdk_post(scope, request, receive, send)
            return
        if not await self.validate_request_headers(request, send):  # the session's id, as the SDK checks it
            return
        writer = self.session_in
        assert writer is not None  # (the session runs: `connect` was entered)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, types.DEFAULT_NEGOTIATED_VERSION)
        request_id = str(message.id)
        reader = self._open_request_stream(request_id)
        await writer.send(self.session_message(message, request, request_id, version))
        await self._answer(scope, receive, send, request_id, reader)

    async def _ahead(
        self, lane: WireLane, raw: Any, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> bool:
        """Whether the lane answered this POST (a plain call, or the cancellation of one it runs)."""
        method = raw.get("method") if type(raw) is dict else None
        if method not in ("tools/call", "notifications/cancelled"):
            return False
        if not await self.validate_request_headers(request, send):
            return True  # (answered: an unknown session)
        if method == "notifications/cancelled":
            if not lane.take(raw, _unanswered):
                return False
            await self.json_response(None, HTTPStatus.ACCEPTED)(scope, receive, send)
            return True
        request_id = str(raw.get("id"))
        if request_id in self.request_streams:
            return False
        out = self.session_out
        assert out is not None  # (the session runs: `connect` was entered)

        post = _Post()

        async def answer(message: types.JSONRPCResponse | types.JSONRPCError, quiet: bool) -> None:
            # The stream opened for this POST, not whatever the id maps to now: a client that reuses
            # an id in flight makes the SDK open another under it.
            feed = post.feed
            if quiet and feed is not None and post.open:
                # Nothing was sent on the POST yet: the call's own task writes the answer, a loop turn
                # sooner than waking the POST's task to write it, then tells that task it is done.
                post.open, post.taken = False, True
                try:
                    await self._send_json(send, message)
                except Exception:  # boundary: the call's task must end (the POST's task is told below)
                    logger.exception("writing the answer to %s failed", request_id)
                finally:
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
                        feed.send_nowait(_ANSWERED)
                return
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):  # (the session ended)
                if quiet and feed is not None:  # (the POST streams already: its stream carries the answer)
                    await feed.send(EventMessage(message))
                else:  # as the session writes its answers: after what was sent about the call before it
                    await out.send(SessionMessage(message))

        if not lane.take(raw, answer, request):
            return False
        # Opened before the call's task first runs (nothing is awaited between): what the server sends
        # about the call comes here.
        reader = self._open_request_stream(request_id)
        post.feed = self.request_streams[request_id][0]
        await self._answer(scope, receive, send, request_id, reader, post)
        return True

    def _open_request_stream(self, request_id: str) -> MemoryObjectReceiveStream[EventMessage]:
        self.request_streams[request_id] = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
        return self.request_streams[request_id][1]

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request_id: str,
        reader: MemoryObjectReceiveStream[EventMessage],
        post: _Post | None = None,
    ) -> None:
        """The POST's answer: JSON if the response is the first message for the request, else the
        SSE stream, opening with that message (or with nothing after `QUIET` seconds). `post`: a
        lane call's, whose task may write the answer itself (`_ahead`)."""
        streaming = False
        try:
            first: EventMessage | None = None
            try:
                with anyio.move_on_after(QUIET):
                    first = await reader.receive()
                if post is not None:
                    if post.taken:  # (the call's task writes the answer)
                        while first is not _ANSWERED:
                            first = await reader.receive()
                        return
                    post.open = False  # this task answers from here
            except (anyio.EndOfStream, anyio.ClosedResourceError):  # the session ended with the request in flight
                if post is not None and post.taken:
                    return
                failed = "Session terminated before the request completed"
                await self.error_response(failed, HTTPStatus.INTERNAL_SERVER_ERROR, types.INTERNAL_ERROR)(
                    scope, receive, send
                )
                return
            if first is not None and isinstance(first.message, types.JSONRPCResponse | types.JSONRPCError):
                await self._send_json(send, first.message)
                return
            streaming = True  # the SSE writer owns the streams from here, and cleans them up
            opening = self.event_data(first) if first is not None else None
            await self._stream(scope, receive, send, request_id, reader, opening)
        finally:
            if post is not None:
                post.open = False  # (whatever happened, the POST is no longer the call's to answer)
            if not streaming:
                mine = post is None or self.request_streams.get(request_id, (None,))[0] is post.feed
                if mine:
                    await self.clean_up_streams(request_id)
                else:  # the id was reused meanwhile: the SDK's streams under it are another POST's
                    assert post is not None and post.feed is not None
                    post.feed.close()
                    reader.close()

    async def _send_json(self, send: Send, message: types.JSONRPCResponse | types.JSONRPCError) -> None:
        """The answer as the SDK's `json_response` writes it, straight to ASGI: building a
        Starlette response for it was a twentieth of the engine's CPU per call."""
        body = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        headers = [(b"content-type", CONTENT_TYPE_JSON.encode()), (b"content-length", b"%d" % len(body))]
        if self.mcp_session_id:
            headers.append((MCP_SESSION_ID_HEADER.encode(), self.mcp_session_id.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _body(self, request: Request) -> Any:
        """The POST's body as JSON, when this module may answer it; None leaves the POST to the SDK."""
        if self.resumable or not self.check_content_type(request):
            return None
        if not all(check_accept_headers(request)):  # JSON and SSE both accepted
            return None
        try:
            return pydantic_core.from_json(await request.body())
        except ValueError:
            return None

    async def terminate(self) -> None:
        await super().terminate()
        if self.wire_lane is not None:
            with anyio.move_on_after(5, shield=True):  # calls still running are cancelled (their servers told)
                await self.wire_lane.close()

    async def _stream(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request_id: str,
        reader: Any,
        first: SSEEvent | None,
    ) -> None:
        """The rest of the request's messages as the SDK streams them, `first` (if any) first."""
        sse_writer, sse_reader = anyio.create_memory_object_stream[SSEEvent](0)
        self.sse_writers[request_id] = sse_writer
        headers = {
            "Cache-Control": "no-cache, no-transform",
            "Connection": "keep-alive",
            "Content-Type": CONTENT_TYPE_SSE,
            **({MCP_SESSION_ID_HEADER: self.mcp_session_id} if self.mcp_session_id else {}),
        }
        writer = partial(self.run_sse_writer, request_id, sse_writer, reader, first)
        response = EventSourceResponse(content=sse_reader, data_sender_callable=writer, headers=headers)
        try:
            await response(scope, receive, send)
        finally:
            await sse_reader.aclose()


class JsonFirstSessions(HttpSessions):
    """The SDK's session manager, its sessions served by `JsonFirstTransport`, each with a fast lane
    of its own from `lanes`, and 2026-07-28 POSTs (no session's) seen by one more (`modern_first`).
    (Stateless handshake-era requests keep the SDK's transport: a replica's one-request session has
    nowhere to send a question.)"""

    lanes: Callable[[], WireLane | None] = staticmethod(lambda: None)
    _modern: WireLane | None = None  # the lane of 2026-07-28 POSTs, which are no session's (`modern_first`)

    async def modern_first(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        lane = self._modern
        if lane is None:
            lane = self._modern = self.lanes()
            if lane is None:
                return receive
        return await answered(lane, self.app, self.lifespan_state, scope, receive, send)

    def admitted(self, transport: StreamableHTTPServerTransport) -> StreamableHTTPServerTransport:
        json_first = adopt_transport(transport, JsonFirstTransport)  # the same object, answering POSTs as above
        lane = json_first.wire_lane = self.lanes()
        if lane is not None:  # a call its client cancelled ends as the SDK ends its own: with an error
            lane.unanswered = json_first.terminate_unanswered
        return json_first


class _Post:
    """A lane call's POST: `open` while nothing was written on it (its answer may still be JSON,
    written by the call's task); `taken` once the call's task writes it."""

    __slots__ = ("feed", "open", "taken")

    def __init__(self) -> None:
        self.open = True
        self.taken = False
        self.feed: MemoryObjectSendStream[EventMessage] | None = None  # what the POST's task reads


_ANSWERED = EventMessage(types.JSONRPCNotification(jsonrpc="2.0", method="mcpmanager/answered"))  # (never sent)


def _plain_request(raw: Any) -> types.JSONRPCRequest | None:
    """A parsed body's request, when this module answers it; None leaves the POST to the SDK."""
    if type(raw) is not dict or "id" not in raw or raw.get("method") in (None, "initialize"):
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValueError:
        return None
    return message if isinstance(message, types.JSONRPCRequest) else None


async def _unanswered(message: types.JSONRPCResponse | types.JSONRPCError, quiet: bool) -> None:
    """(A cancellation is answered by nobody.)"""
