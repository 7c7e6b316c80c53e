"""Every private part of the mcp SDK that mcpmanager relies on (core/sdk_compat.py), checked against
the installed SDK: an upgrade that moves or renames one fails here, by name, instead of quietly
costing a figure in the window or the proxy's pass-through of results."""

from __future__ import annotations

import inspect
from typing import Any, get_args

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from mcpmanager.core import sdk_compat

SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


def test_the_transport_types_are_where_we_import_them() -> None:
    streams = get_args(sdk_compat.TransportStreams)
    assert len(streams) == 2  # (read stream, write stream)
    assert inspect.isclass(sdk_compat.Transport)


async def test_the_http_client_factory_takes_headers_and_gives_an_httpx2_client() -> None:
    async with sdk_compat.mcp_http_client(headers={"X-Test": "1"}) as client:
        assert isinstance(client, httpx2.AsyncClient)
        assert client.headers["X-Test"] == "1"
        assert client.timeout.read is not None and client.timeout.read >= 60  # the transports' long reads


def test_the_result_check_we_skip_is_still_a_session_method() -> None:
    method = ClientSession.validate_tool_result
    assert inspect.iscoroutinefunction(method)
    assert list(inspect.signature(method).parameters) == ["self", "name", "result"]


async def test_results_pass_through_unvalidated_once_the_check_is_skipped() -> None:
    """A result that breaks its own output schema: the SDK's client refuses it, ours hands it on."""

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="count", input_schema={"type": "object"}, output_schema=SCHEMA)]
        )

    async def calling(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[], structured_content={"count": "many"})

    server: Server[Any] = Server("off-schema", on_list_tools=listing, on_call_tool=calling)
    async with Client(server, mode="legacy", cache=None) as strict:
        await strict.list_tools()
        with pytest.raises(RuntimeError, match="Invalid structured content returned by tool count"):
            await strict.call_tool("count", {})
    async with Client(server, mode="legacy", cache=None) as proxy:
        sdk_compat.pass_results_through(proxy)
        await proxy.list_tools()
        result = await proxy.call_tool("count", {})
    assert result.structured_content == {"count": "many"}


def test_the_telemetry_middleware_is_a_list_we_can_empty() -> None:
    server: Server[Any] = Server("s")
    assert [type(m).__name__ for m in server.middleware] == ["OpenTelemetryMiddleware"]
    sdk_compat.without_telemetry(server)
    assert server.middleware == []


def test_the_http_session_count_reads_the_session_manager() -> None:
    server: Server[Any] = Server("s")
    assert sdk_compat.http_sessions(server) == 0
    server.streamable_http_app(host="127.0.0.1")
    manager = server._session_manager
    assert manager is not None  # made by streamable_http_app()
    assert isinstance(manager._server_instances, dict)
    manager._server_instances["a-session"] = StreamableHTTPServerTransport("a-session")  # as a client connecting adds
    assert sdk_compat.http_sessions(server) == 1


def test_the_listen_stream_count_reads_the_listen_handler() -> None:
    listen = ListenHandler(InMemorySubscriptionBus())
    assert isinstance(listen._streams, set)
    assert sdk_compat.listen_streams(listen) == 0


async def test_requests_of_one_connection_share_its_connection() -> None:
    seen: list[ServerSession] = []

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        seen.append(ctx.session)
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode="legacy", cache=None) as client:
        await client.list_tools()
        await client.list_tools()
    async with Client(server, mode="legacy", cache=None) as other:
        await other.list_tools()
    first, second, third = (sdk_compat.connection_of(session) for session in seen)
    assert all(hasattr(session, "_connection") for session in seen)
    assert first is second and first is not third


async def test_the_oauth_provider_takes_the_stored_expiry_as_it_loads_its_tokens() -> None:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    class Stored:
        async def get_tokens(self) -> OAuthToken | None:
            return OAuthToken(access_token="a", token_type="Bearer", expires_in=3600, refresh_token="r")

        async def set_tokens(self, tokens: OAuthToken) -> None: ...

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return OAuthClientInformationFull(client_id="c", redirect_uris=None)

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None: ...

    metadata = OAuthClientMetadata(redirect_uris=["http://127.0.0.1/callback"])  # type: ignore[list-item]
    provider = sdk_compat.OAuthProvider("http://127.0.0.1/mcp", metadata, Stored(), None, None, lambda: 12.0)
    await provider._initialize()  # the private step it hooks: loading the stored tokens
    assert provider.context.current_tokens is not None and provider.context.token_expiry_time == 12.0
    assert not provider.context.is_token_valid() and provider.context.can_refresh_token()  # refreshed first


async def test_a_request_session_tells_whether_its_connection_passed_the_handshake() -> None:
    seen: list[bool] = []

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        seen.append(sdk_compat.initialize_accepted(ctx.session))
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode="legacy", cache=None) as client:
        await client.list_tools()
    assert seen == [True]
    assert sdk_compat.initialize_accepted(object()) is False  # type: ignore[arg-type]  # no connection: not passed


@pytest.mark.parametrize(("mode", "enveloped"), [("legacy", False), ("auto", True)])
async def test_a_raw_request_is_stamped_as_the_session_stamps_its_own(mode: str, enveloped: bool) -> None:
    """The fast lane writes tools/call itself: a 2026-07-28 server must find the same envelope in it."""

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode=mode, cache=None) as client:
        request: dict[str, Any] = {"method": "tools/call", "params": {"name": "t", "arguments": {}}}
        sdk_compat.stamp_request(client, request)
        version = client.protocol_version
    meta = request["params"].get("_meta", {})
    assert (types.PROTOCOL_VERSION_META_KEY in meta) is enveloped
    if enveloped:
        assert meta[types.PROTOCOL_VERSION_META_KEY] == version
        assert types.CLIENT_INFO_META_KEY in meta and types.CLIENT_CAPABILITIES_META_KEY in meta


async def test_a_session_for_a_request_the_dispatcher_never_saw_sends_as_the_request_session_would() -> None:
    """`request_session` wraps the connection's dispatcher, passing the request's id as the private
    `_related_request_id` its own request channel passes; `all_sent` says whether it sent anything."""
    for method in (JSONRPCDispatcher.notify, JSONRPCDispatcher.send_raw_request):
        assert "_related_request_id" in inspect.signature(method).parameters, method
    outcomes: list[tuple[bool, bool]] = []

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        connection = sdk_compat.connection_of(ctx.session)
        quiet, told = sdk_compat.request_session(connection, "q"), sdk_compat.request_session(connection, "t")
        assert quiet is not None and told is not None
        entry = types.LoggingMessageNotificationParams(level="info", data="hi")
        await told.send_notification(types.LoggingMessageNotification(params=entry), related_request_id="t")
        outcomes.append((await sdk_compat.all_sent(quiet), await sdk_compat.all_sent(told)))
        return types.ListToolsResult(tools=[])

    logged: list[object] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode="legacy", cache=None, logging_callback=on_log) as client:
        await client.list_tools()
    assert outcomes == [(False, True)] and logged == ["hi"]
    assert sdk_compat.request_session(object(), 1) is None  # not a dispatcher's connection
