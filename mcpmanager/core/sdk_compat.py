"""Every part of the mcp SDK that is not its public API, in one place.

A proxy needs a few things the SDK does not publish: the transport types its client takes, its HTTP
client factory (the transports' timeouts), how many clients a server has, which connection a request
came on, a way to pass results through unvalidated, and the inside of its Streamable HTTP transport
and session manager, which `serve/json_first.py` builds on (`HttpTransport`, `HttpSessions`). Each
is reached here and nowhere else, and `tests/core/test_sdk_compat.py` fails loudly when an SDK
upgrade moves one of them. At run time the readers stay defensive: a moved private attribute costs a
figure in the window, never a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client
from mcp.client import Transport
from mcp.client._transport import TransportStreams
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.connection import Connection, NotifyOnlyOutbound
from mcp.server.lowlevel import Server
from mcp.server.runner import aclose_shielded
from mcp.server.session import ServerSession
from mcp.server.streamable_http import EventMessage, SSEEvent, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared._context_streams import ContextSendStream
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, MCP_PROTOCOL_VERSION_HEADER, encode_header_value
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.types import Receive, Scope, Send

__all__ = [
    "HttpSessions",
    "HttpTransport",
    "OAuthProvider",
    "Transport",
    "TransportStreams",
    "adopt_transport",
    "complete_by_default",
    "connection_of",
    "exchange_session",
    "http_sessions",
    "mcp_http_client",
    "pass_results_through",
    "request_headers",
    "send_raw",
    "sends_request_headers",
    "stamp_capabilities",
    "without_telemetry",
]


def mcp_http_client(headers: dict[str, str] | None = None, auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    """An HTTP client with the timeouts the SDK's own transports use (`auth`: signed in with OAuth)."""
    return create_mcp_http_client(headers=headers, auth=auth)


class OAuthProvider(OAuthClientProvider):
    """The SDK's OAuth client, which on loading stored tokens forgets when they expire (it keeps only
    a relative `expires_in`): it would send an expired token, be refused, and start a sign-in. This
    one takes the stored absolute expiry from `expiry` as it loads (its private `_initialize`), so an
    engine started after the token expired refreshes it first."""

    def __init__(
        self,
        server_url: str,
        metadata: OAuthClientMetadata,
        storage: TokenStorage,
        redirect: Callable[[str], Awaitable[None]] | None,
        callback: Callable[[], Awaitable[AuthorizationCodeResult]] | None,
        expiry: Callable[[], float | None],
    ) -> None:
        super().__init__(server_url, metadata, storage, redirect, callback)
        self._expiry = expiry

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self._expiry()


def pass_results_through(client: Client) -> None:
    """Skip the SDK's output-schema check on results: a proxy hands results on exactly as the server
    sent them (the client at the far end validates against the same schema), and the check would
    turn a server's slightly-off result into our error and cost time on every call."""

    async def accept(name: str, result: types.CallToolResult) -> None:
        return None

    setattr(client.session, "validate_tool_result", accept)  # noqa: B010 - shadows the method


def complete_by_default(client: Client) -> None:
    """A 2026-07-28 result without `resultType` is complete (the spec's default; the SDK's session
    refuses it), as the fast lane's bytes already take it: one rule for every path and transport."""
    session = client.session
    dispatcher = session._dispatcher
    send = dispatcher.send_raw_request

    async def lenient(
        method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        raw = await send(method, params, opts, **kwargs)
        if "resultType" not in raw and session._negotiated_version in MODERN_PROTOCOL_VERSIONS:
            raw["resultType"] = "complete"
        return raw

    setattr(dispatcher, "send_raw_request", lenient)  # noqa: B010 - shadows the method


def stamp_capabilities(client: Client, capabilities: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """After the session stamps a 2026-07-28 request's envelope, its client capabilities become
    `capabilities(the session's own)` (None: left as they are). The session keeps its stamp
    privately (set when it adopts the server's era: call this after connecting)."""
    session = client.session
    stamp = session._stamp

    def stamped(data: dict[str, Any], opts: CallOptions) -> None:
        stamp(data, opts)
        meta = (data.get("params") or {}).get("_meta")
        if meta is not None and (own := meta.get(types.CLIENT_CAPABILITIES_META_KEY)) is not None:
            replaced = capabilities(own)
            if replaced is not None:
                meta[types.CLIENT_CAPABILITIES_META_KEY] = replaced

    session._stamp = stamped


def stamp_request(client: Client, request: dict[str, Any]) -> None:
    """Put on `request` (a JSON-RPC request as a dict) what the client's session puts on each of its
    own: for a 2026-07-28 server, the envelope in `params._meta` (version, client info,
    capabilities, the log-level opt-in). The session keeps its stamp privately."""
    stamp = getattr(client.session, "_stamp", None)
    if stamp is not None:
        stamp(request, {})


_REQUEST_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar("mcpmanager_request_headers", default=None)


def sends_request_headers(client: Client) -> None:
    """Let the client's requests carry extra HTTP headers (`request_headers`) beside the ones its
    session sets for each request (the routing headers, the `Mcp-Param-*` it mirrors from a tool's
    `x-mcp-header` arguments: those win). The session's per-request headers come from its private
    stamp, fixed once it knows the server's era; call this after entering the client."""
    session = client.session
    stamp = getattr(session, "_stamp", None)
    if stamp is None or getattr(stamp, "sends_request_headers", False):
        return

    def stamped(data: dict[str, Any], opts: CallOptions) -> None:
        stamp(data, opts)
        extra = _REQUEST_HEADERS.get()
        if extra:
            headers = opts.setdefault("headers", {})
            own = {name.lower() for name in headers}
            headers.update({name: value for name, value in extra.items() if name.lower() not in own})

    stamped.sends_request_headers = True  # type: ignore[attr-defined]
    session._stamp = stamped


@contextlib.contextmanager
def request_headers(headers: Mapping[str, str] | None) -> Iterator[None]:
    """While inside, requests sent by clients set up with `sends_request_headers` carry `headers`
    (over HTTP; a stdio server has no headers). The session stamps a request in the sending task,
    so this holds for exactly the requests sent from within."""
    token = _REQUEST_HEADERS.set(headers)
    try:
        yield
    finally:
        _REQUEST_HEADERS.reset(token)


async def send_raw(
    client: Client,
    method: str,
    params: dict[str, Any],
    timeout: float | None,
    extensions: Mapping[str, dict[str, Any]] | None = None,
    name: str | None = None,
    progress: ProgressFnT | None = None,
) -> dict[str, Any]:
    """Send a request the session has no method for (`tasks/*`), or whose answer its typed methods
    would refuse (a task instead of a tool result), stamped as the session stamps its own; the raw
    `result`. `extensions` are added, for this request only, to the capabilities a 2026-07-28
    server reads in the envelope; `name` is its `Mcp-Name` header (SEP-2663 asks it of `tasks/*`);
    `progress` hears the server's progress on it.
    Raises `MCPError` for the server's error, a read timeout or a closed connection."""
    session = client.session
    data: dict[str, Any] = {"method": method, "params": dict(params)}
    opts: CallOptions = {}
    session._stamp(data, opts)
    meta = data["params"].get("_meta")
    if extensions and isinstance(meta, dict) and isinstance(meta.get(types.CLIENT_CAPABILITIES_META_KEY), dict):
        declared = dict(meta[types.CLIENT_CAPABILITIES_META_KEY])  # the session's own dict: copied, not changed
        declared["extensions"] = {**(declared.get("extensions") or {}), **extensions}
        data["params"]["_meta"] = {**meta, types.CLIENT_CAPABILITIES_META_KEY: declared}
    headers = opts.get("headers")
    if name is not None and headers is not None and MCP_METHOD_HEADER in headers:  # the 2026-07-28 wire
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    if timeout is not None:
        opts["timeout"] = timeout
    if progress is not None:
        opts["on_progress"] = progress
    return await session._dispatcher.send_raw_request(method, data["params"], opts)


def without_telemetry(server: Server[Any]) -> None:
    """The SDK's default OpenTelemetry middleware opens a span per message even with no exporter; a
    proxy pays it twice per call, for nothing unless tracing is set up."""
    server.middleware = []


def use_session_manager(server: Server[Any], manager: StreamableHTTPSessionManager) -> None:
    """Make `manager` the server's own, as `streamable_http_app` does with the one it builds (the
    server's `session_manager` and `http_sessions` read it)."""
    server._session_manager = manager


def http_sessions(server: Server[Any]) -> int:
    """Handshake-era clients connected to `server` over Streamable HTTP (kept privately)."""
    manager = getattr(server, "_session_manager", None)
    return len(getattr(manager, "_server_instances", ()) or ())


def initialize_accepted(session: ServerSession) -> bool:
    """Whether the connection of a request's session has passed its handshake (the SDK's own gate
    for requests, read where a middleware answers before that gate)."""
    connection = connection_of(session)
    return bool(getattr(connection, "initialize_accepted", False))


def connection_of(session: ServerSession) -> object:
    """The connection a request's session belongs to (sessions are per request; the connection is
    what lasts). The SDK exposes no public handle."""
    return getattr(session, "_connection", session)


class _RequestChannel:
    """What the SDK's per-request channel does (a server's messages for one request ride that
    request's stream: on HTTP, its POST's), for a request its dispatcher never saw."""

    can_send_request = True

    def __init__(self, dispatcher: JSONRPCDispatcher[Any], request_id: types.RequestId) -> None:
        self._dispatcher = dispatcher
        self._request_id = request_id
        self._sending = 0  # notifications on their way to the transport
        self._idle: asyncio.Event | None = None
        self.used = False  # anything sent about the request at all
        self.closed = False  # the request is answered: what comes later is dropped or refused, as the SDK's

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        if self.closed:
            return
        self.used = True
        self._sending += 1
        try:
            await self._out(method, params, opts)
        finally:
            self._sending -= 1
            if not self._sending and self._idle is not None:
                self._idle.set()

    async def _out(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None) -> None:
        await self._dispatcher.notify(method, params, opts, _related_request_id=self._request_id)

    async def sent(self) -> None:
        while self._sending:
            self._idle = asyncio.Event()
            await self._idle.wait()

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if self.closed:
            raise NoBackChannelError(method)
        self.used = True
        return await self._dispatcher.send_raw_request(method, params, opts, _related_request_id=self._request_id)


async def all_sent(session: ServerSession) -> bool:
    """Wait until every notification sent about a `request_session`'s request is with the transport
    (its answer must not overtake them: on HTTP, what comes after the answer has no stream to ride);
    whether anything was sent about it at all."""
    channel = _channel_of(session)
    if channel is None:
        return True
    await channel.sent()
    return channel.used


def done_with(session: ServerSession) -> None:
    """A `request_session`'s request is answered: it sends nothing more (the SDK closes its own
    request channel so)."""
    channel = _channel_of(session)
    if channel is not None:
        channel.closed = True


def _channel_of(session: ServerSession) -> _RequestChannel | None:
    channel = getattr(session, "_request_outbound", None)
    return channel if isinstance(channel, _RequestChannel) else None


def request_session(connection: object, request_id: types.RequestId) -> ServerSession | None:
    """A session for one request on `connection` (a handshake-era client's, served by the SDK's
    dispatcher) that the dispatcher never saw: what the server sends about it goes where the
    SDK's own request session would send it. None for a connection not served that way."""
    dispatcher = getattr(connection, "outbound", None)
    if not isinstance(connection, Connection) or not isinstance(dispatcher, JSONRPCDispatcher):
        return None
    return ServerSession(cast(Any, _RequestChannel(dispatcher, request_id)), connection)


class _EnvelopedChannel(_RequestChannel):
    """A 2026-07-28 request's channel: notifications ride it, a server-initiated request is refused
    (the era has none: the SDK's modern loop refuses them so)."""

    can_send_request = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)


def modern_outbound(session: ServerSession) -> object:
    """The notify-only outbound of a 2026-07-28 client's stream connection (the SDK's modern loop
    builds one per connection and hands it to each request's connection), or None."""
    outbound = getattr(connection_of(session), "outbound", None)
    inner = getattr(outbound, "_outbound", None)
    return outbound if isinstance(outbound, NotifyOnlyOutbound) and isinstance(inner, JSONRPCDispatcher) else None


def enveloped_session(
    outbound: object, request_id: types.RequestId, version: str, meta: Mapping[str, Any]
) -> ServerSession | None:
    """A session for one 2026-07-28 request its envelope `meta` (already validated) describes, as the
    SDK's modern loop builds one for the request: a born-ready connection of the envelope's client
    and capabilities, the request's log-level opt-in. None for an outbound not `modern_outbound`'s."""
    dispatcher = getattr(outbound, "_outbound", None)
    if not isinstance(outbound, NotifyOnlyOutbound) or not isinstance(dispatcher, JSONRPCDispatcher):
        return None
    connection = Connection.from_envelope(
        version, meta.get(types.CLIENT_INFO_META_KEY), meta[types.CLIENT_CAPABILITIES_META_KEY], outbound=outbound
    )
    channel = _EnvelopedChannel(dispatcher, request_id)
    return ServerSession(cast(Any, channel), connection, request_meta=cast(Any, meta))


Deliver = Callable[[types.JSONRPCNotification], Awaitable[None]]


class _ExchangeChannel(_EnvelopedChannel):
    """A 2026-07-28 HTTP request's channel, for a request the SDK's entry never saw: what the server
    sends about it goes to `deliver` (onto the request's own response)."""

    def __init__(self, deliver: Deliver, request_id: types.RequestId) -> None:
        super().__init__(cast(Any, None), request_id)
        self._deliver = deliver

    async def _out(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None) -> None:
        body = dict(params) if params is not None else None
        await self._deliver(types.JSONRPCNotification(jsonrpc="2.0", method=method, params=body))


def exchange_session(
    deliver: Deliver, request_id: types.RequestId, version: str, meta: Mapping[str, Any]
) -> ServerSession:
    """As `enveloped_session`, for one 2026-07-28 HTTP request: what it sends goes to `deliver`."""
    connection = Connection.from_envelope(
        version, meta.get(types.CLIENT_INFO_META_KEY), meta[types.CLIENT_CAPABILITIES_META_KEY]
    )
    return ServerSession(cast(Any, _ExchangeChannel(deliver, request_id)), connection, request_meta=cast(Any, meta))


async def close_enveloped(session: ServerSession) -> None:
    """Unwind an `enveloped_session`'s connection, as the SDK's modern loop does after each request."""
    connection = connection_of(session)
    # (most calls register nothing to unwind: the shielded, bounded close is then skipped, 6% of the
    # engine's busy time on a 2026-07-28 HTTP call; a stack without the private deque is closed)
    if isinstance(connection, Connection) and getattr(connection.exit_stack, "_exit_callbacks", True):
        await aclose_shielded(connection)


# Streamable HTTP, from the inside (`serve/json_first.py`) -------------------------------------------

_Transport = TypeVar("_Transport", bound="HttpTransport")
_SDK = StreamableHTTPServerTransport


class HttpTransport(StreamableHTTPServerTransport):
    """The SDK's Streamable HTTP transport, with the private parts a subclass builds on under names
    of its own. Aliases and properties, not wrappers: a POST costs no extra call for them. A subclass
    that defines `handle_post` answers every POST the SDK's request handling dispatches (its private
    `_handle_post_request`), and hands back to the SDK's own with `sdk_post`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "handle_post" in cls.__dict__:
            cls._handle_post_request = cls.__dict__["handle_post"]  # type: ignore[method-assign]

    sdk_post = _SDK._handle_post_request
    validate_request_headers = _SDK._validate_request_headers  # the session's id and the protocol version
    check_content_type = _SDK._check_content_type
    session_message = _SDK._create_session_message  # a request as the session reads it, with its metadata
    json_response = _SDK._create_json_response
    error_response = _SDK._create_error_response
    event_data = _SDK._create_event_data
    run_sse_writer = _SDK._run_sse_writer
    clean_up_streams = _SDK._clean_up_memory_streams
    terminate_unanswered = _SDK._terminate_unanswered_request  # a cancelled request's stream ends with an error

    @property
    def request_streams(
        self,
    ) -> dict[types.RequestId, tuple[MemoryObjectSendStream[EventMessage], MemoryObjectReceiveStream[EventMessage]]]:
        """Request id → (send, receive) of what the session sends about that request."""
        return self._request_streams

    @property
    def sse_writers(self) -> dict[types.RequestId, MemoryObjectSendStream[SSEEvent]]:
        return self._sse_stream_writers

    @property
    def resumable(self) -> bool:
        """It has an event store (clients may resume their streams)."""
        return self._event_store is not None

    @property
    def session_in(self) -> ContextSendStream[SessionMessage | Exception] | None:
        """Where the transport puts what clients send, for the session to read (once `connect` runs)."""
        return self._read_stream_writer

    @property
    def session_out(self) -> ContextSendStream[SessionMessage] | None:
        """Where the session puts what it sends, for the transport to deliver (once `connect` runs)."""
        return self._write_stream


def adopt_transport(transport: StreamableHTTPServerTransport, cls: type[_Transport]) -> _Transport:
    """The SDK's transport made an instance of `cls`, in place: the session manager keeps the object
    it made and serves it as before, while its POSTs go to `cls`. `cls` may add class attributes, not
    state its `__init__` would set (it never runs)."""
    transport.__class__ = cls
    return cast(_Transport, transport)


class HttpSessions(StreamableHTTPSessionManager):
    """The SDK's session manager; `admitted` sees each new session's transport before it serves its
    first request (the SDK admits sessions privately, `_admit_session`)."""

    def admitted(self, transport: StreamableHTTPServerTransport) -> StreamableHTTPServerTransport:
        return transport

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        return None if transport is None else self.admitted(transport)

    @property
    def lifespan_state(self) -> Any:
        """What the server's lifespan yielded (requests' `lifespan_context`), while `run` runs."""
        return self._lifespan_state

    async def modern_first(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """A 2026-07-28 request (its `MCP-Protocol-Version` header names no handshake-era version),
        seen before the SDK's entry for that era: None when answered here, else the `receive` to
        hand it on with (what was read of it replayed)."""
        return receive

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._task_group is not None:  # (else the SDK says it was not started)
            version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
            if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                handed = await self.modern_first(scope, receive, send)
                if handed is None:
                    return
                receive = handed
        await super()._handle_request(scope, receive, send)


_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")  # (ASGI's names are lowercase)
