"""Every private part of the mcp SDK that mcpmanager relies on (core/sdk_compat.py), checked against
the installed SDK: an upgrade that moves or renames one fails here, by name, instead of quietly
costing a figure in the window, the proxy's pass-through of results or `serve --http`'s JSON answers
(`serve/json_first.py`, built on the SDK's transport from the inside)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any, get_args

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

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


async def test_the_stamped_capabilities_are_replaced_for_a_modern_server_only() -> None:
    """`stamp_capabilities` rewrites the client capabilities the session stamps (the private `_stamp`,
    set when the session adopts the server's era): what the server reads is what it returned."""
    told: list[Any] = []

    async def calling(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        told.append(ctx.session.client_capabilities)
        return types.CallToolResult(content=[])

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    server: Server[Any] = Server("s", on_call_tool=calling, on_list_tools=listing)
    for mode in ("auto", "legacy"):
        async with Client(server, mode=mode, cache=None) as client:
            sdk_compat.stamp_capabilities(client, lambda own: {"roots": {}})
            await client.call_tool("t", {})
    modern, handshake = told
    assert modern == types.ClientCapabilities(roots=types.RootsCapability())
    assert handshake is not None and handshake.roots is None  # the handshake era's: its initialize


async def test_a_modern_result_without_result_type_is_complete_once_the_session_is_lenient() -> None:
    """`complete_by_default` wraps the session's dispatcher (its private `_dispatcher`) and reads the
    negotiated version (`_negotiated_version`): a result the server sent without `resultType` is
    complete, where the session refused it."""

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode="auto", cache=None) as client:
        session = client.session
        dispatcher = session._dispatcher
        assert session._negotiated_version == client.protocol_version
        send = dispatcher.send_raw_request

        async def bare(method: str, params: Any, opts: Any = None, **kwargs: Any) -> dict[str, Any]:
            raw = await send(method, params, opts, **kwargs)
            raw.pop("resultType", None)  # as a server that leaves it out writes it
            return raw

        setattr(dispatcher, "send_raw_request", bare)  # noqa: B010
        with pytest.raises(Exception, match="resultType"):
            await client.list_tools(cache_mode="bypass")
        sdk_compat.complete_by_default(client)
        assert (await client.list_tools(cache_mode="bypass")).tools == []


@pytest.mark.parametrize(("mode", "enveloped"), [("legacy", False), ("auto", True)])
async def test_a_raw_request_of_a_method_the_session_lacks_is_sent_stamped_with_the_extensions_added(
    mode: str, enveloped: bool
) -> None:
    """`send_raw` (tasks/*): the session's stamp, the extensions added for that request only, and the
    raw result of a method the SDK does not know."""
    seen: list[dict[str, Any] | None] = []

    class Params(types.RequestParams):
        task_id: str

    async def get(ctx: ServerRequestContext[Any], params: Params) -> dict[str, Any]:
        seen.append(dict(ctx.meta or {}) if ctx.meta else None)
        return {"taskId": params.task_id, "status": "working"}

    server: Server[Any] = Server("s")
    server.add_request_handler("tasks/get", Params, get)
    async with Client(server, mode=mode, cache=None) as client:
        extensions: dict[str, dict[str, Any]] = {"io.modelcontextprotocol/tasks": {}}
        raw = await sdk_compat.send_raw(client, "tasks/get", {"taskId": "t1"}, 5, extensions=extensions, name="t1")
        plain = await sdk_compat.send_raw(client, "tasks/get", {"taskId": "t2"}, 5)
    assert raw["taskId"] == "t1" and raw["status"] == "working" and plain["taskId"] == "t2"
    if enveloped:
        first, second = seen[0] or {}, seen[1] or {}
        assert first[types.CLIENT_CAPABILITIES_META_KEY]["extensions"] == extensions
        assert "extensions" not in second[types.CLIENT_CAPABILITIES_META_KEY]  # for that request only
    else:
        assert seen == [None, None]


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


async def test_an_exchange_session_s_connection_is_unwound_only_when_something_was_registered() -> None:
    """`close_enveloped` skips the shielded close of an exit stack nothing was pushed on (the stack's
    private deque, read with a fallback that closes): what was pushed is still unwound."""
    meta = {types.CLIENT_CAPABILITIES_META_KEY: {}, types.CLIENT_INFO_META_KEY: {"name": "c", "version": "1"}}

    async def deliver(message: object) -> None:
        raise AssertionError("nothing is sent")

    session = sdk_compat.exchange_session(deliver, 1, "2026-07-28", meta)
    connection = sdk_compat.connection_of(session)
    assert isinstance(connection, Connection)
    assert not connection.exit_stack._exit_callbacks  # type: ignore[attr-defined]  # (the skip applies)
    await sdk_compat.close_enveloped(session)
    unwound: list[str] = []
    connection.exit_stack.callback(unwound.append, "closed")
    assert connection.exit_stack._exit_callbacks  # type: ignore[attr-defined]
    await sdk_compat.close_enveloped(session)
    assert unwound == ["closed"]


# Streamable HTTP from the inside (`HttpTransport`, `HttpSessions`; `serve/json_first.py`) -----------

# The SDK's private methods `HttpTransport` names, with the parameters and the kind it calls them with.
TRANSPORT_METHODS = {
    "_handle_post_request": ("sdk_post", ["scope", "request", "receive", "send"], True),
    "_validate_request_headers": ("validate_request_headers", ["request", "send"], True),
    "_check_content_type": ("check_content_type", ["request"], False),
    "_create_session_message": ("session_message", ["message", "request", "request_id", "protocol_version"], False),
    "_create_json_response": ("json_response", ["response_message", "status_code", "headers"], False),
    "_create_error_response": ("error_response", ["error_message", "status_code", "error_code", "headers"], False),
    "_create_event_data": ("event_data", ["event_message"], False),
    "_run_sse_writer": (
        "run_sse_writer", ["request_id", "sse_stream_writer", "request_stream_reader", "priming_event"], True
    ),
    "_clean_up_memory_streams": ("clean_up_streams", ["request_id"], True),
    "_terminate_unanswered_request": ("terminate_unanswered", ["request_id"], True),
}  # fmt: skip


@pytest.mark.parametrize("private", TRANSPORT_METHODS)
def test_each_private_transport_method_is_there_with_its_parameters(private: str) -> None:
    public, parameters, coroutine = TRANSPORT_METHODS[private]
    method = getattr(StreamableHTTPServerTransport, private, None)
    assert callable(method), private
    assert list(inspect.signature(method).parameters) == ["self", *parameters], private
    assert inspect.iscoroutinefunction(method) is coroutine, private
    assert getattr(sdk_compat.HttpTransport, public) is method  # an alias: no call added on the way
    assert callable(StreamableHTTPServerTransport.terminate)


def test_the_sdk_dispatches_posts_and_admits_sessions_through_the_hooks_we_take() -> None:
    assert "self._handle_post_request(" in inspect.getsource(StreamableHTTPServerTransport._handle_request)
    assert "self._admit_session(" in inspect.getsource(StreamableHTTPSessionManager._handle_stateful_request)
    assert list(inspect.signature(StreamableHTTPSessionManager._admit_session).parameters) == ["self", "requestor"]

    class Posts(sdk_compat.HttpTransport):
        async def handle_post(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None: ...

    assert Posts._handle_post_request is Posts.__dict__["handle_post"]
    assert sdk_compat.HttpTransport._handle_post_request is StreamableHTTPServerTransport._handle_post_request


async def test_the_transport_s_private_state_is_there_and_read_as_named() -> None:
    transport = StreamableHTTPServerTransport(mcp_session_id="s")
    for attribute in (
        "_request_streams",
        "_sse_stream_writers",
        "_event_store",
        "_read_stream_writer",
        "_write_stream",
    ):
        assert hasattr(transport, attribute), attribute
    assert transport._request_streams == {} and transport._sse_stream_writers == {}
    assert transport._read_stream_writer is None and transport._write_stream is None  # until connect()
    ours = sdk_compat.adopt_transport(transport, sdk_compat.HttpTransport)
    assert ours is transport and isinstance(ours, sdk_compat.HttpTransport) and ours.mcp_session_id == "s"
    assert ours.request_streams is transport._request_streams and ours.sse_writers is transport._sse_stream_writers
    assert not ours.resumable and ours.session_in is None and ours.session_out is None
    request = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))
    with anyio.fail_after(5):
        async with ours.connect() as (read, write), anyio.create_task_group() as tg:
            assert ours.session_out is write  # what the session sends goes in here
            writer = ours.session_in
            assert writer is not None
            tg.start_soon(writer.send, request)  # what the session reads
            assert (await read.receive()) is request


def test_json_first_shadows_no_sdk_part_but_the_hooks() -> None:
    """A name of ours on a subclass of the SDK's, private or not, would silently replace an SDK
    member of that name, now or after an upgrade: only the hooks and `terminate` may."""
    from mcpmanager.core.serve.json_first import JsonFirstSessions, JsonFirstTransport

    def shadowed(cls: type[Any], sdk: type[Any]) -> set[str]:
        return {name for name in vars(cls) if hasattr(sdk, name) and not name.startswith("__")}

    assert shadowed(JsonFirstTransport, StreamableHTTPServerTransport) == {"_handle_post_request", "terminate"}
    assert shadowed(sdk_compat.HttpTransport, StreamableHTTPServerTransport) == set()
    assert shadowed(JsonFirstSessions, StreamableHTTPSessionManager) == set()
    assert shadowed(sdk_compat.HttpSessions, StreamableHTTPSessionManager) == {"_admit_session", "_handle_request"}


def test_the_session_manager_hands_every_request_to_the_handler_it_names() -> None:
    """`HttpSessions` sees 2026-07-28 POSTs first by overriding the handler the SDK's manager wraps
    (`_handle_request`, behind its body limit) and reads the lifespan state it keeps."""
    from mcp.server.lowlevel import Server

    sessions = sdk_compat.HttpSessions(app=Server("x"))
    wrapped = getattr(sessions.asgi_app, "app", None)
    assert getattr(wrapped, "__func__", None) is sdk_compat.HttpSessions._handle_request
    assert hasattr(sessions, "_lifespan_state") and sessions.lifespan_state is None  # (until `run`)


# Nowhere else -----------------------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[2] / "mcpmanager"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_names(files: list[Path]) -> set[str]:
    """Private methods, and attributes set on `self` or declared in a class body, in these files."""
    found: set[str] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.add(node.target.id)
    return {name for name in found if _private(name)}


def _sdk(cls: type[Any]) -> bool:
    return cls.__module__.split(".")[0] in ("mcp", "mcp_types")


def _touched(cls: ast.ClassDef) -> set[str]:
    """The private names a class body defines or reaches on anything."""
    found = {node.attr for node in ast.walk(cls) if isinstance(node, ast.Attribute)}
    found |= {node.name for node in ast.walk(cls) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {name for name in found if _private(name)}


def test_no_module_but_sdk_compat_reaches_a_private_part_of_the_sdk() -> None:
    """A private module or name imported from the SDK, an object's class reassigned, a private part
    of the SDK reached on an object or used or overridden by a subclass of an SDK class: each
    belongs in `sdk_compat.py`, with its check above. (The window's modules are read, not imported:
    the core's tests do not load Qt; none of them subclasses an SDK class.)"""
    ours = [file for file in sorted(PACKAGE.rglob("*.py")) if file.name not in ("sdk_compat.py", "__main__.py")]
    # Private names only the SDK defines: one of ours of the same name is ours where we use it.
    sdk_only = _private_names(sorted(Path(inspect.getfile(Server)).parents[2].rglob("*.py"))) - _private_names(ours)
    found: list[str] = []
    for file in ours:
        tree = ast.parse(file.read_text(encoding="utf-8"))
        where = file.relative_to(PACKAGE.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types"):
                if any(_private(part) for part in node.module.split(".")):
                    found.append(f"{where}:{node.lineno}: imports the private module {node.module}")
                found += [
                    f"{where}:{node.lineno}: imports {alias.name}" for alias in node.names if _private(alias.name)
                ]
            elif isinstance(node, ast.Attribute) and node.attr == "__class__" and isinstance(node.ctx, ast.Store):
                found.append(f"{where}:{node.lineno}: reassigns an object's class")
            elif isinstance(node, ast.Attribute) and node.attr in sdk_only:
                found.append(f"{where}:{node.lineno}: .{node.attr}, a private part of the SDK")
        if where.parts[1] == "gui":
            continue
        parts = where.with_suffix("").parts
        module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))  # a package
        for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
            sdk_bases = [base for base in getattr(module, cls.name).__mro__ if _sdk(base)]
            if sdk_bases:
                theirs = _private_names([Path(inspect.getfile(base)) for base in sdk_bases])
                touched = sorted(_touched(cls) & theirs)
                found += [f"{where}:{cls.lineno}: {cls.name} reaches the SDK's {name}" for name in touched]
    assert found == []
    assert "_request_streams" in sdk_only  # (read from the installed SDK)


async def test_extra_request_headers_go_with_the_session_s_own_and_never_over_them() -> None:
    """`sends_request_headers` wraps the session's private per-request stamp (where its HTTP headers
    are set): what `request_headers` holds is added, and a header the session set itself wins."""

    async def listing(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    server: Server[Any] = Server("s", on_list_tools=listing)
    async with Client(server, mode="auto", cache=None) as client:
        sdk_compat.sends_request_headers(client)
        sdk_compat.sends_request_headers(client)  # once is enough: not wrapped twice
        stamp = client.session._stamp
        assert getattr(stamp, "sends_request_headers", False)

        def headers_of(extra: dict[str, str] | None) -> dict[str, str]:
            opts: dict[str, Any] = {}
            with sdk_compat.request_headers(extra):
                stamp({"method": "tools/call", "params": {"name": "t", "arguments": {}}}, opts)  # type: ignore[arg-type]
            return dict(opts.get("headers", {}))

        plain = headers_of(None)
        assert plain["mcp-method"] == "tools/call" and plain["mcp-name"] == "t"
        got = headers_of({"Mcp-Param-Tenant": "acme", "MCP-METHOD": "other"})
        assert got == {**plain, "Mcp-Param-Tenant": "acme"}
        assert headers_of(None) == plain  # only while inside
