"""The upstream MCP server that clients talk to, built on the SDK's low-level `Server`.

Direct mode lists every enabled tool under its exposed name and routes each call to its server over
that server's one long-lived session. Results pass through exactly as the server returned them;
failures become `isError` results a model can act on, never bare protocol errors. When the exposed
set changes, every connected client is told, in both protocol eras.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager import __version__
from mcpmanager.core import meta_tools as meta
from mcpmanager.core.activity import Activity, Outcome
from mcpmanager.core.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.discovery import Discovery
from mcpmanager.core.downstream import Downstream, ProgressCallback, error_result
from mcpmanager.core.resolve.resolver import Resolver
from mcpmanager.core.resolve.words import fold
from mcpmanager.core.search.index import SearchIndex
from mcpmanager.core.states import State
from mcpmanager.core.tokens import tokens_of

logger = logging.getLogger(__name__)

Mode = Literal["discovery", "direct"]

INSTRUCTIONS = (
    "mcpmanager serves the tools of several MCP servers as one. In discovery mode, find tools with "
    "discover_tools (describe the task in full words) and run them with call_tool."
)


class _ProxyServer(Server[Any]):
    """Advertise tools.listChanged even where a transport builds the options with no arguments
    (Streamable HTTP does), so clients know to listen."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class Proxy:
    def __init__(
        self,
        catalogue: Catalogue,
        servers: Mapping[str, Downstream],
        mode: Mode = "direct",
        index: SearchIndex | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.discovery = Discovery(catalogue, index if index is not None else SearchIndex())
        self.servers = servers  # the engine's live map: servers come and go with config changes
        self.mode = mode
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)  # `listen.close()` ends every modern client's listen stream
        # Handshake-era clients get list_changed on their connection's standalone channel; the
        # session object of their latest request is how we reach it (one entry per connection).
        self._legacy_sessions: dict[int, ServerSession] = {}
        self._listed: tuple[int, list[types.Tool]] | None = None
        self._tokens: tuple[tuple[int, str], tuple[int, int]] | None = None
        self.calls = 0
        self.activity = Activity()
        self.resolver = Resolver(catalogue, lambda query, limit: self.discovery.search_names(query, limit))
        self._notified: list[dict[str, Any]] = []
        self.server = _ProxyServer(
            "mcpmanager",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_subscriptions_listen=self.listen,
            get_tool_input_schema=self._input_schema,
        )
        # The SDK's default OpenTelemetry middleware opens a span per message even with no exporter;
        # a proxy pays it twice per call, for nothing unless tracing is set up.
        self.server.middleware = []

    # What clients see -----------------------------------------------------------------------------

    def visible_tools(self) -> list[CatalogueTool]:
        tools = self.catalogue.tools()
        if self.mode == "discovery":
            return [t for t in tools if t.always_on]
        return tools

    def tool_list(self) -> list[types.Tool]:
        generation = self.catalogue.generation
        if self._listed is None or self._listed[0] != generation:
            listed = list(meta.META_TOOLS) if self.mode == "discovery" else []
            for tool in self.visible_tools():
                try:
                    listed.append(types.Tool.model_validate(tool.exposed_spec()))
                except ValueError as exc:  # one malformed schema must not hide every other tool
                    logger.warning("skipping tool %s: invalid definition: %s", tool.key, exc)
            self._listed = (generation, listed)
        return self._listed[1]

    def context_tokens(self) -> tuple[int, int]:
        """(what a client's tools/list costs now, what it would cost with every tool listed); computed
        once per catalogue change (encoding 500 tools costs tens of ms)."""
        key = (self.catalogue.generation, self.mode)
        if self._tokens is not None and self._tokens[0] == key:
            return self._tokens[1]
        listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in self.tool_list()]
        resting = tokens_of(listed)
        direct = resting if self.mode == "direct" else tokens_of([t.exposed_spec() for t in self.catalogue.tools()])
        self._tokens = (key, (resting, direct))
        return resting, direct

    def clients(self) -> int:
        """Clients connected now: HTTP sessions of the handshake era and modern clients listening
        for changes (stdio serves one client). The SDK keeps both privately; read them defensively."""
        count = 0
        manager = getattr(self.server, "_session_manager", None)
        count += len(getattr(manager, "_server_instances", ()) or ())
        count += len(getattr(self.listen, "_streams", ()) or ())
        return count

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.catalogue.get(name)
        schema = tool.spec.get("inputSchema") if tool else None
        return schema if isinstance(schema, dict) else None

    # Handlers -------------------------------------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=self.tool_list())

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        self._remember(ctx)
        self.calls += 1
        name, args = params.name, params.arguments
        if self.mode == "discovery" and self.catalogue.get(name) is None and (meta_name := _meta_name(name)):
            if meta_name == meta.DISCOVER:
                return self.discovery.discover(args)
            if meta_name == meta.REGEX:
                return self.discovery.regex(args)
            if meta_name == meta.SCHEMA:
                return self.discovery.schema(args, self.resolver.resolve)
            target = meta.argument(args, "tool_name")
            if not isinstance(target, str) or not target:
                return error_result("call_tool needs 'tool_name' (find one with discover_tools) and 'arguments'.")
            arguments, problem = meta.tool_arguments(args)
            if problem is not None:
                return error_result(f"call_tool: {problem}.")
            return await self._route(ctx, params, target, arguments, "call_tool")
        return await self._route(ctx, params, name, args, "direct")

    async def _route(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        called: str,
        arguments: dict[str, Any] | None,
        via: str,
    ) -> types.CallToolResult | types.InputRequiredResult:
        started = time.perf_counter()
        record = self.activity.begin(called, via)

        def finish(outcome: Outcome, result: types.CallToolResult | types.InputRequiredResult) -> None:
            detail = _first_line(result) if outcome != "ok" else None
            self.activity.update(record, outcome=outcome, detail=detail, duration=time.perf_counter() - started)

        # Any catalogue tool is callable by name, also in discovery mode where it is not listed:
        # a model that found a tool and calls it directly should not be refused.
        plan = self.resolver.plan(called, arguments, via == "call_tool")
        # Nothing known answers the name: a server still starting may list it. (An ambiguous name or a
        # withheld guess is answered already; waiting up to startingWait would only delay the answer.)
        missed = plan.resolution.tool is None and not plan.resolution.ambiguous and plan.resolution.withheld is None
        if missed and await self._wait_for_starting():
            plan = self.resolver.plan(called, arguments, via == "call_tool")  # its server may have just come up
        tool, checked, how = plan.tool, plan.checked, plan.resolution.how
        if tool is not None and checked is not None:
            renames = tuple((r.passed, r.declared) for r in checked.renames)
            where = {"server": tool.server, "tool": tool.name, "exposed": tool.exposed}
            self.activity.update(record, **where, how=how, renames=renames)
        if plan.error is not None or tool is None:
            failure = error_result(plan.error or f"Unknown tool '{called}'.")
            finish("unknown" if tool is None else "refused", failure)
            return failure
        if checked is not None and checked.renames:
            arguments = checked.arguments
        result = await self._forward(ctx, params, tool, called, arguments)
        finish("error" if isinstance(result, types.CallToolResult) and result.is_error else "ok", result)
        return result

    async def _forward(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        tool: CatalogueTool,
        called: str,
        arguments: dict[str, Any] | None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        downstream = self.servers.get(tool.server)
        if downstream is None:
            return error_result(f"Server '{tool.server}' of tool '{called}' is not configured any more.")
        try:
            relay = _progress_relay(ctx)
            answers, state = params.input_responses, params.request_state
            return await downstream.call_tool(tool.name, arguments, relay, answers, state)
        except Exception as exc:  # boundary: a bug here must reach the model as text, not -32603
            logger.exception("call to %s failed", tool.key)
            return error_result(f"Calling '{called}' on server '{tool.server}' failed: {exc}")

    async def _wait_for_starting(self) -> bool:
        """Wait (bounded) while servers that have never listed tools are starting; True if any were.

        On a first run nothing is cached yet: a name the model read elsewhere may belong to a server
        that is seconds away from ready. Waiting beats an "unknown tool" that would be wrong soon."""
        starting = [
            d
            for d in self.servers.values()
            if d.status.state is State.STARTING and self.catalogue.server_tools(d.name) is None
        ]
        if not starting:
            return False
        wait = max(d.settings.starting_wait for d in starting)
        with anyio.move_on_after(wait):
            while any(d.status.state is State.STARTING for d in starting):
                await anyio.sleep(0.05)
        return True

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        session = ctx.session
        if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # modern clients hear about changes on their subscriptions/listen stream
        connection = getattr(session, "_connection", session)  # the SDK exposes no public handle
        self._legacy_sessions[id(connection)] = session

    # Change notification --------------------------------------------------------------------------

    def reset_notified(self) -> None:
        """Take what clients see now as the baseline (at start, before anyone could have listed)."""
        self._notified = [t.exposed_spec() for t in self.visible_tools()]

    async def refresh(self) -> bool:
        """Tell every client if what they see changed since the last call; True if it did."""
        snapshot = [t.exposed_spec() for t in self.visible_tools()]
        if snapshot == self._notified:
            return False
        self._notified = snapshot
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self._legacy_sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # a gone client: forget it
                logger.debug("dropping a client session: %s", exc)
                self._legacy_sessions.pop(key, None)
        return True


_META_FOLDS = {fold(name): name for name in meta.NAMES}


def _meta_name(name: str) -> str | None:
    """The meta-tool `name` means: its own name or a spelling of it (`callTool`, `discover-tools`)."""
    if name in meta.NAMES:
        return name
    return _META_FOLDS.get(fold(name)) or _META_FOLDS.get(fold(name) + "s")


def _first_line(result: types.CallToolResult | types.InputRequiredResult) -> str | None:
    if not isinstance(result, types.CallToolResult):
        return None
    for content in result.content:
        if isinstance(content, types.TextContent) and content.text.strip():
            return content.text.strip().splitlines()[0][:300]
    return None


def _progress_relay(ctx: ServerRequestContext[Any]) -> ProgressCallback | None:
    meta = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken"))
    if token is None:
        return None

    async def relay(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(progress, total, message)

    return relay
