"""One mode of the proxy as clients see it: its own SDK server, its tools/list and its change
notifications. The router has one mode server per mode over one catalogue and one activity log, so
every client picks its mode (`/mcp/discovery`, `/mcp/direct`) from the same engine.

Discovery lists the meta-tools and the always-on tools; direct lists every enabled tool. To a
client that declares MCP Apps (a host that renders UIs), discovery lists the tools with a UI too (a
host renders a tool's UI only for a tool it was told of, by its own name), and both modes list the
app-only tools (the host keeps them from its model and lets their app call them); other clients never
see an app-only tool (`apps`). Both route any catalogue tool called by name, and both tell their
own clients when what they list changed, in both protocol eras. Prompts, resources, completion and
logging are the same in both modes (`Passthrough`): people and applications pick those, not the
model, so listing them costs no model context.
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
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager import __version__
from mcpmanager.core.catalogue.apps import declares_apps
from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy import wire_lane
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.fast_lane import FastLane
from mcpmanager.core.proxy.listen_streams import ListenStreams
from mcpmanager.core.proxy.passthrough import Passthrough
from mcpmanager.core.proxy.tasks import Tasks
from mcpmanager.core.proxy.wire_lane import WireLane
from mcpmanager.core.sdk_compat import http_sessions, without_telemetry
from mcpmanager.core.supervisor.task_calls import EXTENSION

logger = logging.getLogger(__name__)

CallResult = types.CallToolResult | types.InputRequiredResult
# A client's tools/call: (its request's context, its parameters, whether meta-tools are served).
CallHandler = Callable[[ServerRequestContext[Any], types.CallToolRequestParams, bool], Awaitable[CallResult]]
SchemaLookup = Callable[[str], dict[str, Any] | None]
Offered = Callable[[], frozenset[str]]  # what the servers offer: prompts, resources, completions, logging
Extensions = Callable[[], dict[str, dict[str, Any]]]  # what to advertise under `capabilities.extensions`
RootsChanged = Callable[[ServerSession], Awaitable[None]]

TASKS_CAPABILITY = types.ServerTasksCapability(
    list=types.TasksListCapability(),
    cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability())),
)

INSTRUCTIONS = (
    "mcpmanager serves the tools of several MCP servers as one. In discovery mode, find tools with "
    "discover_tools (describe the task in full words) and run them with call_tool."
)


class _ProxyServer(Server[Any]):
    """Advertise listChanged even where a transport builds the options with no arguments (Streamable
    HTTP does), so clients know to listen; advertise prompts, resources, completions and logging
    only when some server offers them."""

    offered: Offered = staticmethod(lambda: frozenset())  # set per instance
    tasks_offered: Callable[[], bool] = staticmethod(lambda: False)  # likewise (`tasks`)
    extensions_of: Extensions = staticmethod(lambda: {})  # set per instance

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        extensions = {**self.extensions_of(), **(extensions or {})} or None
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        offered = self.offered()
        update: dict[str, Any] = {
            k: None for k in ("prompts", "resources", "completions", "logging") if k not in offered
        }
        if self.tasks_offered():  # both flavours: each era's sieve keeps its own
            update["tasks"] = TASKS_CAPABILITY
            update["extensions"] = {**(capabilities.extensions or {}), EXTENSION: {}}
        return capabilities.model_copy(update=update)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )


class ModeServer:
    def __init__(
        self,
        mode: Mode,
        catalogue: Catalogue,
        call: CallHandler,
        input_schema: SchemaLookup,
        passthrough: Passthrough,
        offered: Offered,
        roots_changed: RootsChanged,
        connections: Connections,
        lane: FastLane | None = None,
        tasks: Tasks | None = None,
        extensions: Extensions = dict,
    ) -> None:
        self.mode = mode
        self.catalogue = catalogue
        self._call = call
        self._passthrough = passthrough
        self._roots_changed = roots_changed
        self._connections = connections
        self._lane = lane
        connections.on_close(self._forget)
        # Modern clients' listen streams, one bus per view of the tools (with MCP Apps or without), so a
        # change only one view sees reaches only its clients; `close_listens` ends them all. They carry
        # the statuses of the tasks they name, too (`Tasks.watch`).
        self.buses = {apps: InMemorySubscriptionBus() for apps in (False, True)}
        watch = tasks.watch if tasks is not None else None
        self.listens = {apps: ListenStreams(bus, watch) for apps, bus in self.buses.items()}
        # Handshake-era clients get list_changed on their connection's standalone channel; the
        # session object of their latest request is how we reach it (one entry per connection).
        self._legacy_sessions: dict[int, ServerSession] = {}
        # By whether the client declares MCP Apps: (generation, tools, servers whose tools are listed).
        self._listed: dict[bool, tuple[int, list[types.Tool], tuple[str, ...]]] = {}
        self._notified: dict[bool, list[tuple[dict[str, Any], bool]]] = {False: [], True: []}
        self.server = _ProxyServer(
            "mcpmanager",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_subscriptions_listen=self._on_listen,
            on_list_prompts=self._on_list_prompts,
            on_get_prompt=self._on_get_prompt,
            on_list_resources=self._on_list_resources,
            on_list_resource_templates=self._on_list_templates,
            on_read_resource=self._on_read_resource,
            on_subscribe_resource=self._on_subscribe,
            on_unsubscribe_resource=self._on_unsubscribe,
            on_completion=self._on_complete,
            get_tool_input_schema=input_schema,
        )
        self.server.offered = offered
        self.server.extensions_of = extensions
        # Added as handlers, not constructor arguments: those warn (both are deprecated in 2026-07-28).
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._on_set_level)
        self.server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._on_roots_changed
        )
        without_telemetry(self.server)
        if tasks is not None:  # tasks/* and task-augmented calls (`tasks`), seen before the lanes
            self.server.tasks_offered = tasks.offered
            tasks.install(self.server)
        if lane is not None:  # the common tools/call, answered before the typed handler (`fast_lane`)
            self.server.middleware.append(wire_lane.adopt)  # or before the session (`wire_lane`)
            self.server.middleware.append(lane.middleware(self.server, mode == "discovery", self._remember))

    def wire_lane(self) -> WireLane | None:
        """The fast lane ahead of the SDK's session, for one client connection (`wire_lane`)."""
        if self._lane is None:
            return None
        return WireLane(self._lane, self.server, self.mode == "discovery", self._remember)

    # What its clients see -------------------------------------------------------------------------

    def visible_tools(self, apps: bool = False) -> list[CatalogueTool]:
        """What tools/list shows; `apps`: to a client that declared MCP Apps."""
        tools = self.catalogue.tools()
        if self.mode == "discovery":
            return [t for t in tools if (t.always_on and not t.app_only) or (apps and (t.has_ui or t.app_only))]
        return tools if apps else [t for t in tools if not t.app_only]

    def tool_list(self, apps: bool = False) -> list[types.Tool]:
        generation = self.catalogue.generation
        cached = self._listed.get(apps)
        if cached is None or cached[0] != generation:
            # The meta-tools and the always-on tools (in either mode: the user pinned them) ask to be
            # loaded at once by clients that search tools themselves; the rest of direct mode does not.
            listed = [meta.kept_loaded(t) for t in meta.META_TOOLS] if self.mode == "discovery" else []
            servers: dict[str, None] = {}
            for tool in self.visible_tools(apps):
                try:
                    listed.append(types.Tool.model_validate(tool.exposed_spec()))
                    servers[tool.server] = None
                except ValueError as exc:  # one malformed schema must not hide every other tool
                    logger.warning("skipping tool %s: invalid definition: %s", tool.key, exc)
                    continue
                if tool.always_on:
                    listed[-1] = meta.kept_loaded(listed[-1])
            cached = self._listed[apps] = (generation, listed, tuple(servers))
        return cached[1]

    def tool_list_result(self, apps: bool = False) -> types.ListToolsResult:
        """tools/list's answer (`apps`: to a client that declared MCP Apps): the tools, cached no
        longer than the servers whose tools it lists allow (`freshness`)."""
        tools = self.tool_list(apps)
        fresh = self._passthrough.freshness(self._listed[apps][2], "tools")
        return types.ListToolsResult(tools=tools, **fresh.fields())

    def clients(self) -> int:
        """Clients connected now: HTTP sessions of the handshake era and modern clients listening
        for changes (stdio serves one client)."""
        return http_sessions(self.server) + sum(listen.count() for listen in self.listens.values())

    def close_listens(self) -> None:
        """End every modern client's listen stream."""
        for listen in self.listens.values():
            listen.close()

    # Handlers -------------------------------------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        return self.tool_list_result(declares_apps(ctx.session.client_capabilities))

    async def _on_call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> CallResult:
        self._remember(ctx)
        return await self._call(ctx, params, self.mode == "discovery")

    async def _on_listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        # A modern client subscribes to resources in its listen filter: follow them downstream.
        for uri in params.notifications.resource_subscriptions or ():
            await self._passthrough.listen_for(uri)
        return await self.listens[declares_apps(ctx.session.client_capabilities)](ctx, params)

    async def _on_list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._remember(ctx)
        return self._passthrough.prompts(params.cursor if params else None)

    async def _on_get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        self._remember(ctx)
        return await self._passthrough.get_prompt(ctx, params)

    async def _on_list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._remember(ctx)
        return self._passthrough.resources(params.cursor if params else None)

    async def _on_list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._remember(ctx)
        return self._passthrough.templates(params.cursor if params else None)

    async def _on_read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        self._remember(ctx)
        return await self._passthrough.read_resource(ctx, params)

    async def _on_subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        await self._passthrough.client_subscribes(self._remember(ctx), str(params.uri), True)
        return types.EmptyResult()

    async def _on_unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        await self._passthrough.client_subscribes(self._remember(ctx), str(params.uri), False)
        return types.EmptyResult()

    async def _on_complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        self._remember(ctx)
        return await self._passthrough.complete(ctx, params)

    async def _on_set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        await self._passthrough.set_level(self._remember(ctx), params.level)
        return types.EmptyResult()

    async def _on_roots_changed(self, ctx: ServerRequestContext[Any], params: types.NotificationParams) -> None:
        await self._roots_changed(ctx.session)

    def _remember(self, ctx: ServerRequestContext[Any]) -> int:
        """Keep a handshake-era client's session to reach it later; its connection's key."""
        session = ctx.session
        key = self._connections.key(session)
        if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:  # modern: changes on listen streams
            self._legacy_sessions[key] = session
        return key

    def _view(self, key: int) -> bool:
        """Whether a handshake-era client connection declared MCP Apps (which tools it lists)."""
        session = self._legacy_sessions.get(key)
        return session is not None and declares_apps(session.client_capabilities)

    def _forget(self, key: int) -> None:
        self._legacy_sessions.pop(key, None)  # the client left

    def legacy_sessions(self) -> list[tuple[int, ServerSession]]:
        return list(self._legacy_sessions.items())

    # Change notification --------------------------------------------------------------------------

    def reset_notified(self) -> None:
        """Take what clients see now as the baseline (at start, before anyone could have listed)."""
        self._notified = {apps: self._snapshot(apps) for apps in self._notified}

    def _snapshot(self, apps: bool) -> list[tuple[dict[str, Any], bool]]:
        """What the tools of the list are, and whether each is pinned (its `_meta` says so: `tool_list`)."""
        return [(t.exposed_spec(), t.always_on) for t in self.visible_tools(apps)]

    async def refresh(self) -> bool:
        """Tell every client of this mode whose list changed since the last call (with MCP Apps or
        without: `visible_tools`); True if any did."""
        changed = set()
        for apps, notified in self._notified.items():
            snapshot = self._snapshot(apps)
            if snapshot != notified:
                self._notified[apps] = snapshot
                changed.add(apps)
                await self.buses[apps].publish(ToolsListChanged())
        if changed:
            await self._to_legacy(types.ToolListChangedNotification(), lambda key: self._view(key) in changed)
        return bool(changed)

    async def offers_changed(self, kinds: frozenset[str]) -> None:
        """Tell every client that the merged prompts or resources changed."""
        if "prompts" in kinds:
            await self._publish(PromptsListChanged())
            await self._to_legacy(types.PromptListChangedNotification())
        if "resources" in kinds:
            await self._publish(ResourcesListChanged())
            await self._to_legacy(types.ResourceListChangedNotification())

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients that subscribed to `uri` (the listen handler filters modern ones)."""
        await self._publish(ResourceUpdated(uri))
        notification = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
        await self._to_legacy(notification, lambda key: self._passthrough.holds(key, uri))

    async def _publish(self, event: Any) -> None:
        for bus in self.buses.values():
            await bus.publish(event)

    async def broadcast(
        self, notification: types.ServerNotification, wanted: Callable[[int], bool] = lambda connection: True
    ) -> None:
        """Send `notification` to every handshake-era client of this mode that `wanted` (by connection)."""
        await self._to_legacy(notification, wanted)

    async def _to_legacy(
        self, notification: types.ServerNotification, wanted: Callable[[int], bool] = lambda key: True
    ) -> None:
        for key, session in list(self._legacy_sessions.items()):
            if not wanted(key):
                continue
            try:
                await session.send_notification(notification)
            except Exception as exc:  # a gone client: forget it
                logger.debug("dropping a client session: %s", exc)
                self._legacy_sessions.pop(key, None)
