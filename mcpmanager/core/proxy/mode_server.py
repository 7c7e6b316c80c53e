"""One mode of the proxy as clients see it: its own SDK server, its tools/list and its change
notifications. The router has one mode server per mode over one catalogue and one activity log, so
every client picks its mode (`/mcp/discovery`, `/mcp/direct`) from the same engine.

Discovery lists the meta-tools and the always-on tools; direct lists every enabled tool. Both
route any catalogue tool called by name, and both tell their own clients when what they list
changed, in both protocol eras.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager import __version__
from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.sdk_compat import connection_of, http_sessions, listen_streams, without_telemetry

logger = logging.getLogger(__name__)

CallResult = types.CallToolResult | types.InputRequiredResult
# A client's tools/call: (its request's context, its parameters, whether meta-tools are served).
CallHandler = Callable[[ServerRequestContext[Any], types.CallToolRequestParams, bool], Awaitable[CallResult]]
SchemaLookup = Callable[[str], dict[str, Any] | None]

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


class ModeServer:
    def __init__(self, mode: Mode, catalogue: Catalogue, call: CallHandler, input_schema: SchemaLookup) -> None:
        self.mode = mode
        self.catalogue = catalogue
        self._call = call
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)  # `listen.close()` ends every modern client's listen stream
        # Handshake-era clients get list_changed on their connection's standalone channel; the
        # session object of their latest request is how we reach it (one entry per connection).
        self._legacy_sessions: dict[int, ServerSession] = {}
        self._listed: tuple[int, list[types.Tool]] | None = None
        self._notified: list[dict[str, Any]] = []
        self.server = _ProxyServer(
            "mcpmanager",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_subscriptions_listen=self.listen,
            get_tool_input_schema=input_schema,
        )
        without_telemetry(self.server)

    # What its clients see -------------------------------------------------------------------------

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

    def clients(self) -> int:
        """Clients connected now: HTTP sessions of the handshake era and modern clients listening
        for changes (stdio serves one client)."""
        return http_sessions(self.server) + listen_streams(self.listen)

    # Handlers -------------------------------------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=self.tool_list())

    async def _on_call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> CallResult:
        self._remember(ctx)
        return await self._call(ctx, params, self.mode == "discovery")

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        session = ctx.session
        if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # modern clients hear about changes on their subscriptions/listen stream
        self._legacy_sessions[id(connection_of(session))] = session

    # Change notification --------------------------------------------------------------------------

    def reset_notified(self) -> None:
        """Take what clients see now as the baseline (at start, before anyone could have listed)."""
        self._notified = [t.exposed_spec() for t in self.visible_tools()]

    async def refresh(self) -> bool:
        """Tell every client of this mode if what it lists changed since the last call; True if it did."""
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
