"""What clients talk to: one SDK server per mode (`mode_server`) over one router.

Every call is resolved (`Resolver`), kept in the call book (`CallBook`: its count, activity record,
time in flight, learning) and routed to its server over that server's one long-lived session.
Results pass through exactly as the server returned them; failures become `isError` results a
model can act on, except the errors the spec defines (`protocol_errors`), which stay JSON-RPC
errors. Prompts, resources, completion and logging go through `Passthrough`; what servers ask their
client goes to the client behind the request (`Callers`, `ClientAsks`, `Rounds`); news from servers
(changed lists, updated resources, log messages) reaches the clients through every mode server.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from mcpmanager.core.catalogue import apps
from mcpmanager.core.catalogue.apps import declares_apps
from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.catalogue.offerings import Offerings
from mcpmanager.core.config.modes import MODES, Mode
from mcpmanager.core.proxy import advertised
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy.activity import Activity
from mcpmanager.core.proxy.approval import Approvals, Decision
from mcpmanager.core.proxy.asking import ClientAsks, ask_caller, missing_capability
from mcpmanager.core.proxy.call_book import Call, CallBook
from mcpmanager.core.proxy.callers import Caller, Callers, progress_relay, progress_token
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.discovery import Discovery
from mcpmanager.core.proxy.fast_lane import FastLane
from mcpmanager.core.proxy.learning import Learning, shown_keys
from mcpmanager.core.proxy.mode_server import CallResult, ModeServer
from mcpmanager.core.proxy.param_headers import client_param_headers
from mcpmanager.core.proxy.passthrough import Passthrough
from mcpmanager.core.proxy.rounds import Rounds
from mcpmanager.core.proxy.starting import StartingServers
from mcpmanager.core.proxy.tasks import Tasks
from mcpmanager.core.proxy.token_count import tools_tokens
from mcpmanager.core.proxy.trace_context import trace_of
from mcpmanager.core.resolve.names import Resolution
from mcpmanager.core.resolve.resolver import Resolver
from mcpmanager.core.resolve.words import fold
from mcpmanager.core.sdk_compat import request_headers
from mcpmanager.core.search.index import SearchIndex
from mcpmanager.core.search.semantic import ModelName, SemanticIndex
from mcpmanager.core.search.vector_cache import VectorCache
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.protocol_errors import passes
from mcpmanager.core.supervisor.tool_calls import Unavailable
from mcpmanager.core.tool_results import error_result

logger = logging.getLogger(__name__)


class Router:
    def __init__(
        self,
        catalogue: Catalogue,
        servers: Mapping[str, Downstream],
        mode: Mode = "direct",
        synonyms: Mapping[str, list[str]] | None = None,
        offerings: Offerings | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.offerings = offerings or Offerings(catalogue.max_name_length)
        # A `ui://` URI tools of several servers name is listed apart for each (`apps`).
        self.offerings.shared_ui = catalogue.shared_ui_uris
        catalogue.changed.connect(lambda _generation: self.offerings.refresh())
        self.learning = Learning()  # the engine gives it its file (`LearnedStore`)
        self.synonyms: Mapping[str, list[str]] = synonyms or {}
        # The semantic side of search, cached by tool text; None searches with BM25F alone (the
        # engine gives it its file, or None when the config turns it off: `use_search_vectors`).
        self.search_vectors: VectorCache | None = VectorCache()
        self.semantic_model: ModelName = "static"  # its model (`proxy.semanticModel`); the cache is that model's
        self.discovery = Discovery(catalogue, self._search_index(), self.learning)
        self.servers = servers  # the engine's live map: servers come and go with config changes
        self._tokens: tuple[tuple[int, str], tuple[int, int]] | None = None
        self.activity = Activity()
        self.approvals = Approvals()  # asking before calls (the engine gives it the config)
        self.resolver = Resolver(catalogue, lambda query, limit: self.discovery.search_names(query, limit))
        self.connections = Connections()
        self.connections.on_close(lambda key: self.learning.session_closed(("connection", key)))
        self.callers = Callers(self.connections)
        self.asks = ClientAsks(self.callers, self._legacy_sessions, self._configured_roots, self.server_log)
        self.rounds = Rounds(self.callers, self.asks)
        self.book = CallBook(self.activity, self.learning, self.connections, self.rounds)  # every path's calls
        self.starting = StartingServers(servers)
        self.passthrough = Passthrough(self.offerings, servers, self.callers, self.rounds, self.starting)
        self.tasks = Tasks(servers, self.connections, self.callers, self.asks)  # tasks (`tasks`)
        self.fast_lane = FastLane(self)
        self.mode_servers = {
            m: ModeServer(
                m,
                catalogue,
                self.call,
                self.input_schema,
                self.passthrough,
                self.offered,
                self.roots_changed,
                self.connections,
                self.fast_lane,
                self.tasks,
                self.extensions,
            )
            for m in MODES
        }
        self.mode = mode  # the default mode: what stdio and `/mcp` serve
        # Why a name is a withheld tool's (its definition changed since approved), or None: the engine's.
        self.withheld: Callable[[str], str | None] = lambda _called: None

    @property
    def server(self) -> Server[Any]:
        """The SDK server of the default mode."""
        return self.mode_servers[self.mode].server

    def mode_server(self, mode: Mode | None = None) -> ModeServer:
        return self.mode_servers[mode or self.mode]

    def use_synonyms(self, synonyms: Mapping[str, list[str]]) -> None:
        """Search with these synonyms from now on (the index is rebuilt on the next query)."""
        self.synonyms = synonyms
        self.discovery = Discovery(self.catalogue, self._search_index(), self.learning)

    def use_search_vectors(self, vectors: VectorCache | None, model: ModelName = "static") -> None:
        """Search with the semantic side of `model` cached in `vectors` (a cache of that model's:
        `semantic.vector_cache`), or without it (None)."""
        self.search_vectors = vectors
        self.semantic_model = model
        self.discovery = Discovery(self.catalogue, self._search_index(), self.learning)

    def _search_index(self) -> SearchIndex:
        vectors = self.search_vectors
        if vectors is None:
            return SearchIndex(self.synonyms, None)
        # In the background: the engine's vector job computes tools' vectors in a thread (`vector_job`).
        return SearchIndex(self.synonyms, SemanticIndex(cache=vectors, model=self.semantic_model, background=True))

    def close_listeners(self) -> None:
        """End every modern client's listen stream and release parked requests (before an HTTP
        server stops)."""
        for server in self.mode_servers.values():
            server.close_listens()
        self.rounds.close()

    # What clients see -----------------------------------------------------------------------------

    def visible_tools(self) -> list[CatalogueTool]:
        return self.mode_server().visible_tools()

    def tool_list(self) -> list[types.Tool]:
        return self.mode_server().tool_list()

    def context_tokens(self) -> tuple[int, int]:
        """(what a client's tools/list costs now, what it would cost with every tool listed); computed
        once per catalogue change (encoding 500 tools costs tens of ms)."""
        key = (self.catalogue.generation, self.mode)
        if self._tokens is not None and self._tokens[0] == key:
            return self._tokens[1]
        # As a host that renders MCP Apps lists them (the tools with a UI too), less the app-only
        # tools that host keeps from its model: what the model's context holds.
        shown = self.mode_server().tool_list(apps=True)
        listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in shown]
        resting = tools_tokens([t for t in listed if not apps.app_only(t)])
        every = [t.exposed_spec() for t in self.catalogue.tools() if not t.app_only]
        direct = resting if self.mode == "direct" else tools_tokens(every)
        self._tokens = (key, (resting, direct))
        return resting, direct

    def clients(self) -> int:
        return sum(server.clients() for server in self.mode_servers.values())

    def input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.catalogue.get(name)
        schema = tool.spec.get("inputSchema") if tool else None
        return schema if isinstance(schema, dict) else None

    # Handlers -------------------------------------------------------------------------------------

    async def call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, meta_tools: bool
    ) -> CallResult:
        """A client's tools/call: a meta-tool (discovery mode), or a catalogue tool by any name."""
        self.book.received()
        if self.rounds.is_retry(params):  # a parked call goes on, whatever its name resolves to now
            retried: CallResult = await self.rounds.resume(ctx, params, "tools/call")  # (a stale state: -32602)
            return retried
        name, args = params.name, params.arguments
        # In discovery mode a meta-tool's own name is the meta-tool's, whatever a server calls its
        # tools: a server's `call_tool` would otherwise receive every call the model makes (it stays
        # callable through call_tool by its name); a spelling of one only when no tool has that name.
        exact = name in meta.NAMES
        if meta_tools and (exact or self.catalogue.get(name) is None) and (meta_name := _meta_name(name)):
            if meta_name == meta.DISCOVER:
                found = await self.starting.retry(
                    lambda: self.discovery.discover(args, self._unknown_servers()),
                    lambda result: bool((result.structured_content or {}).get("tools")),
                    lambda server: self.catalogue.server_tools(server) is None,
                    lambda: self.catalogue.generation,
                )
                query, keys = meta.argument(args, "query"), shown_keys(found, self.catalogue.get)
                self.book.discovered(ctx, query, keys)
                return found
            if meta_name == meta.REGEX:
                return self.discovery.regex(args)
            if meta_name == meta.SCHEMA:
                return self.discovery.schema(args, self.resolver.resolve, lambda t: self.approvals.rule(t).policy)
            target = meta.argument(args, "tool_name")
            if not isinstance(target, str) or not target:
                return error_result("call_tool needs 'tool_name' (find one with discover_tools) and 'arguments'.")
            arguments, problem = meta.tool_arguments(args)
            if problem is not None:
                return error_result(f"call_tool: {problem}.")
            return await self._route(ctx, params, target, arguments, "call_tool")
        return await self._route(ctx, params, name, args, "direct", search=meta_tools)

    async def _route(
        self,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        called: str,
        arguments: dict[str, Any] | None,
        via: str,
        search: bool = True,
    ) -> CallResult:
        """`search`: the client can call discover_tools (discovery mode), so a miss may point to it."""
        call = self.book.begin(ctx, called, via)
        with self.book.cancellable(call):
            # Any catalogue tool is callable by name, also in discovery mode where it is not listed:
            # a model that found a tool and calls it directly should not be refused.
            plan = self.resolver.plan(called, arguments, via == "call_tool", search=search)
            if _missed(plan.resolution) and await self._wait_for_owner(called):
                plan = self.resolver.plan(called, arguments, via == "call_tool", search=search)  # its server may be up
            tool, checked, how = plan.tool, plan.checked, plan.resolution.how
            if tool is not None and checked is not None:
                renames = tuple((r.passed, r.declared) for r in checked.renames)
                where = {"server": tool.server, "tool": tool.name, "exposed": tool.exposed}
                self.book.update(call, **where, how=how, renames=renames)
            if tool is not None and tool.app_only and (via == "call_tool" or not declares_apps(_capabilities(ctx))):
                # MCP Apps: only a host's app calls it, by a tools/call of its own (`apps`).
                plan = replace(plan, error=_APP_ONLY.format(called=called))
            if plan.error is not None or tool is None:
                text = plan.error or f"Unknown tool '{called}'."
                if tool is None and (held := self.withheld(called)) is not None:
                    text = held  # a tool that changed since approved: say so, not "unknown"
                elif tool is None and not plan.resolution.ambiguous:  # candidates were named: they are the answer
                    text += self._unknown_servers()
                if tool is None:  # a "did you mean": calling one of its names next may teach
                    suggested = filter(None, map(self.catalogue.get, plan.resolution.suggestions))
                    named = [*plan.resolution.ambiguous, *suggested]
                    self.book.suggested(ctx, [t.key for t in named])
                failure = error_result(text)
                self.book.finish(call, "unknown" if tool is None else "refused", failure)
                return failure
            if checked is not None and checked.renames:
                arguments = checked.arguments
            decided: list[Decision] = []
            approve = await self._approval(call, tool, arguments, decided)
            if decided and not decided[0].allowed:
                failure = error_result(decided[0].refusal or "Refused.")
                self.book.finish(call, "refused", failure)
                return failure
            try:
                result = await self._forward(call, params, tool, called, arguments, approve)
            except MCPError as exc:  # an error the spec defines: the client's, as a JSON-RPC error
                self.book.finish(call, "error", error_result(str(exc)))
                raise
            failed = isinstance(result, types.CallToolResult) and result.is_error
            refused = bool(decided) and not decided[0].allowed  # by the client, asked before the first send
            self.book.finish(call, "refused" if refused else "error" if failed else "ok", result, tool.key)
            return result

    async def _approval(
        self,
        call: Call,
        tool: CatalogueTool,
        arguments: dict[str, Any] | None,
        decided: list[Decision],
    ) -> Callable[[Caller], Awaitable[Decision]] | None:
        """Whether `tool` may be called now (`approval`): what was decided goes into `decided` and the
        record; a call whose client must be asked gets the question to put on its first send."""
        rule = self.approvals.rule(tool)
        client = _client_name(call.ctx)
        if rule.policy == "allow":
            if rule.own:
                self.book.update(call, approval="allowed by its setting")
            return None
        if rule.policy == "deny":
            decided.append(self.approvals.denied(tool, rule))
        elif self.approvals.window:
            self.book.update(call, approval="asking in the window")
            decided.append(await self.approvals.in_window(tool, arguments, rule, client))
        elif missing_capability(_capabilities(call.ctx), _ELICIT_FORM) is not None:
            decided.append(self.approvals.nobody(tool, rule, client))
        else:
            self.book.update(call, approval=f"asking {client}")

            async def approve(caller: Caller) -> Decision:
                decision = await self.approvals.of_client(
                    tool, arguments, rule, client, lambda request: ask_caller(caller, request)
                )
                decided.append(decision)
                refused = {"outcome": "refused", "detail": decision.refusal} if not decision.allowed else {}
                self.book.update(call, approval=decision.note, **refused)
                return decision

            return approve
        self.book.update(call, approval=decided[0].note)
        return None

    async def _forward(
        self,
        call: Call,
        params: types.CallToolRequestParams,
        tool: CatalogueTool,
        called: str,
        arguments: dict[str, Any] | None,
        approve: Callable[[Caller], Awaitable[Decision]] | None = None,
    ) -> CallResult:
        """`approve`: the client must approve the call first (asked as a server's question is)."""
        downstream = self.servers.get(tool.server)
        if downstream is None:
            return error_result(f"Server '{tool.server}' of tool '{called}' is not configured any more.")
        # A tool known from the cache while its server starts is checked again once the server is up
        # and its tools reviewed: a definition changed since approved is withheld, not called. (A
        # ready server's tools were reviewed before they were resolved: nothing to wait for.)
        if downstream.status.state is not State.READY:
            with contextlib.suppress(Unavailable):  # (call_tool says why it cannot run)
                await downstream.ready_client()
                if (held := self.withheld(f"{tool.server}:{tool.name}")) is not None:
                    return error_result(held)
        wants_progress = progress_token(call.ctx) is not None

        async def send(caller: Caller, answers: types.InputResponses | None, state: str | None) -> CallResult:
            nonlocal approve
            if approve is not None:  # before the first send only
                decision, approve = await approve(caller), None
                if not decision.allowed:
                    return error_result(decision.refusal or "Refused.")
            relay = progress_relay(caller) if wants_progress else None
            trace = trace_of(caller.ctx.meta)  # the client's trace context, as it wrote it
            with request_headers(client_param_headers(caller.ctx)):  # its Mcp-Param-* headers go on
                if self.tasks.takes(tool.spec, downstream):  # a tool the server may run as a task
                    return await self.tasks.call(
                        caller, downstream, tool.name, tool.spec, arguments, relay, answers, state
                    )
                return await downstream.call_tool(tool.name, arguments, relay, answers, state, trace)

        try:
            result: CallResult = await self.book.in_flight(tool, call, params, send)
            return result
        except Exception as exc:  # boundary: a bug here must reach the model as text, not -32603
            if passes(exc):  # ...but an error the spec defines stays one (`protocol_errors`)
                raise
            return self.book.failed(called, tool, exc)

    def _unknown_servers(self) -> str:
        """For a miss: servers whose tools are not known because they are down or still starting, so a model (and the
        person reading the log) learns the tool may be theirs rather than not exist."""
        down = [
            f"'{d.name}' ({d.status.describe()})"
            for d in self.servers.values()
            if not d.config.disabled
            and d.status.state in (State.FAILED, State.BACKOFF, State.STARTING, State.NEEDS_SIGN_IN)
            and self.catalogue.server_tools(d.name) is None
        ]
        if not down:
            return ""
        return f" Not known either: the tools of {', '.join(down)}, which never listed them."

    async def _wait_for_owner(self, called: str) -> bool:
        """Nothing known answers `called`: wait while a server that could own it is starting
        (`StartingServers`), until the name resolves. True if there was a server to wait for."""

        def unknown(server: str) -> bool:
            return self.catalogue.server_tools(server) is None

        return await self.starting.wait(
            lambda: self.starting.could_own(called, unknown), lambda: not _missed(self.resolver.resolve(called))
        )

    # Everything besides tools ---------------------------------------------------------------------

    def extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions to advertise (`advertised.extensions`)."""
        return advertised.extensions(self.servers.values())

    def offered(self) -> frozenset[str]:
        """The kinds to advertise: prompts, resources, completions, logging (`advertised.offered`)."""
        return advertised.offered(self.servers.values())

    async def offers_changed(self, kinds: frozenset[str]) -> None:
        for server in self.mode_servers.values():
            await server.offers_changed(kinds)

    async def resource_updated(self, uri: str) -> None:
        for server in self.mode_servers.values():
            await server.resource_updated(uri)

    async def server_log(self, server: str, logged: types.LoggingMessageNotificationParams) -> None:
        """A server's log message, named after it. While a client's request is in flight on the server,
        to that client on that request's stream (a modern client only at the level its request asked
        for); when several clients are, or the request is parked, to none (the pane has it: a message
        about one client's work is not another's to read). With nothing in flight, to every connected
        handshake-era client at or above its level."""
        level, source = logged.level, logged.logger
        message = types.LoggingMessageNotificationParams(
            level=level, logger=f"{server}/{source}" if source else server, data=logged.data
        )
        notification = types.LoggingMessageNotification(params=message)
        if not self.callers.on(server):
            for mode_server in self.mode_servers.values():
                await mode_server.broadcast(notification, lambda connection: self.passthrough.wants(connection, level))
            return
        caller = self.callers.find(server)
        if isinstance(caller, str) or caller.parked:
            return
        session = caller.ctx.session
        if level not in allowed_log_levels(session.protocol_version, caller.ctx.meta):
            return  # a modern client's request did not opt in at this level
        if not caller.modern and not self.passthrough.wants(caller.key, level):
            return  # below what this handshake-era client set
        try:
            await session.send_notification(notification, related_request_id=caller.ctx.request_id)
        except Exception as exc:  # the request just ended: nothing to tell
            logger.debug("a log message found its request gone: %s", exc)

    async def roots_changed(self, session: ServerSession) -> None:
        """A client's roots changed: every server that follows the clients' roots is told."""
        self.asks.client_roots_changed(self.connections.key(session))
        for downstream in list(self.servers.values()):
            if downstream.status.state is State.READY:
                try:
                    await downstream.roots_changed()
                except Exception as exc:  # one gone server must not stop the others hearing it
                    logger.debug("%s: roots list_changed not delivered: %s", downstream.name, exc)

    def _legacy_sessions(self) -> list[tuple[int, ServerSession]]:
        return [entry for server in self.mode_servers.values() for entry in server.legacy_sessions()]

    def _configured_roots(self, server: str) -> list[str] | None:
        downstream = self.servers.get(server)
        return downstream.config.roots if downstream is not None else None

    # Change notification --------------------------------------------------------------------------

    def reset_notified(self) -> None:
        """Take what clients see now as the baseline (at start, before anyone could have listed)."""
        for server in self.mode_servers.values():
            server.reset_notified()

    async def refresh(self) -> bool:
        """Tell every client whose list changed; True if any did."""
        changed = [await server.refresh() for server in self.mode_servers.values()]
        return any(changed)


_META_FOLDS = {fold(name): name for name in meta.NAMES}


def _meta_name(name: str) -> str | None:
    """The meta-tool `name` means: its own name or a spelling of it (`callTool`, `discover-tools`)."""
    if name in meta.NAMES:
        return name
    return _META_FOLDS.get(fold(name)) or _META_FOLDS.get(fold(name) + "s")


_APP_ONLY = (
    "Tool '{called}' is for its server's app alone (MCP Apps visibility [\"app\"]): the host's app "
    "calls it, not the model."
)
# What a client must have declared to be asked for approval (form-mode elicitation).
_ELICIT_FORM = types.ElicitRequest(params=types.ElicitRequestFormParams(message="", requested_schema={}))


def _capabilities(ctx: ServerRequestContext[Any]) -> types.ClientCapabilities:
    return ctx.session.client_capabilities or types.ClientCapabilities()


def _client_name(ctx: ServerRequestContext[Any]) -> str:
    params = ctx.session.client_params
    return params.client_info.name if params is not None else "the client"


def _missed(resolution: Resolution) -> bool:
    """Nothing known answers the name. (An ambiguous name or a withheld guess is answered already:
    waiting for a starting server would only delay the answer.)"""
    return resolution.tool is None and not resolution.ambiguous and resolution.withheld is None
