"""Everything a client asks besides tools: prompts, resources, completion, logging.

Lists are merged from every server (`Offerings`) and paged to clients with cursors; each request
goes to the server that owns what it names, under that server's own name for it. A server's
protocol error passes through with its code and message, so a client sees what the server said
(a missing resource keeps its code); mcpmanager's own refusals name the server or the thing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast, get_args

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.catalogue import apps
from mcpmanager.core.catalogue.offerings import Offerings, Prompt
from mcpmanager.core.catalogue.pins import Held
from mcpmanager.core.proxy.callers import Caller, Callers
from mcpmanager.core.proxy.rounds import Rounds
from mcpmanager.core.proxy.starting import StartingServers
from mcpmanager.core.proxy.trace_context import trace_of
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.envelope import calling
from mcpmanager.core.supervisor.freshness import DEFAULT, Freshness, merged
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.protocol_errors import read_error_for, resource_not_found
from mcpmanager.core.supervisor.tool_calls import Unavailable

logger = logging.getLogger(__name__)

PAGE_SIZE = 500  # items per page of a merged list: a cursor only where lists are long

T = TypeVar("T")
LOG_LEVELS: tuple[types.LoggingLevel, ...] = get_args(types.LoggingLevel)  # least to most severe


def page_of(items: Sequence[T], cursor: str | None, size: int = PAGE_SIZE) -> tuple[list[T], str | None]:
    """One page of a merged list and the cursor of the next (None at the end). Cursors are offsets:
    the lists change rarely, and a client that pages across a change just refetches."""
    start = 0
    if cursor:
        try:
            start = int(cursor)
        except ValueError:
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor {cursor!r}.") from None
        if start < 0 or start > len(items):
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor {cursor!r}.")
    end = start + size
    return list(items[start:end]), str(end) if end < len(items) else None


class Passthrough:
    def __init__(
        self,
        offerings: Offerings,
        servers: Mapping[str, Downstream],
        callers: Callers,
        rounds: Rounds,
        starting: StartingServers,
    ) -> None:
        self.offerings = offerings
        self.starting = starting
        self.servers = servers
        self.callers = callers
        self.rounds = rounds
        # What each handshake-era client connection asked for with logging/setLevel (by connection).
        self.log_levels: dict[int, types.LoggingLevel] = {}
        # Resource subscriptions, for all modes at once: the handshake-era connections holding each
        # URI, and the URIs some modern client's listen filter named (kept while their server runs).
        self._holders: dict[str, set[int]] = {}
        self._listened: set[str] = set()
        callers.connections.on_close(self._client_gone)
        # Held for review (`pins`, the engine's): why a prompt name is a held prompt's, and the held
        # templates a URI matches. Their requests are refused with the reason, never forwarded.
        self.held_prompt: Callable[[str], str | None] = lambda _name: None
        self.held_templates: Callable[[str], list[Held]] = lambda _uri: []

    # Lists ----------------------------------------------------------------------------------------

    def prompts(self, cursor: str | None) -> types.ListPromptsResult:
        listed = self.offerings.prompts()
        page, next_cursor = page_of([p.exposed_spec() for p in listed], cursor)
        fresh = self.freshness((p.server for p in listed), "prompts")
        prompts = [types.Prompt.model_validate(p) for p in page]
        return types.ListPromptsResult(prompts=prompts, next_cursor=next_cursor, **fresh.fields())

    def resources(self, cursor: str | None) -> types.ListResourcesResult:
        listed = self.offerings.resources()
        page, next_cursor = page_of([r.spec for r in listed], cursor)
        fresh = self.freshness((r.server for r in listed), "resources")
        resources = [types.Resource.model_validate(r) for r in page]
        return types.ListResourcesResult(resources=resources, next_cursor=next_cursor, **fresh.fields())

    def templates(self, cursor: str | None) -> types.ListResourceTemplatesResult:
        listed = self.offerings.templates()
        page, next_cursor = page_of([t.spec for t in listed], cursor)
        fresh = self.freshness((t.server for t in listed), "templates")
        templates = [types.ResourceTemplate.model_validate(t) for t in page]
        result = types.ListResourceTemplatesResult(resource_templates=templates, next_cursor=next_cursor)
        return result.model_copy(update=fresh.fields())

    def freshness(self, servers: Iterable[str], kind: str) -> Freshness:
        """The caching hints of a merged list of `kind` whose items came from `servers` (`freshness`):
        each server's as it last listed that kind; a server not ready now (its items known from
        before) counts as having given none."""
        parts = []
        for name in dict.fromkeys(servers):
            downstream = self.servers.get(name)
            ready = downstream is not None and downstream.status.state is State.READY
            parts.append(downstream.freshness.get(kind, DEFAULT) if downstream is not None and ready else DEFAULT)
        return merged(parts)

    # Routed requests ------------------------------------------------------------------------------

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        if self.rounds.is_retry(params):
            retried: types.GetPromptResult | types.InputRequiredResult
            retried = await self.rounds.resume(ctx, params, "prompts/get")
            return retried
        prompt = await self._prompt(params.name)
        downstream, client = await self._ready(prompt.server)

        async def get(
            caller: Caller, responses: types.InputResponses | None, state: str | None
        ) -> types.GetPromptResult | types.InputRequiredResult:
            return await _guarded(
                downstream,
                client.session.get_prompt(
                    prompt.name,
                    params.arguments,
                    input_responses=responses,
                    request_state=state,
                    meta=_trace(caller.ctx),
                    allow_input_required=True,
                ),
            )

        result: types.GetPromptResult | types.InputRequiredResult = await self.rounds.run(
            prompt.server, ctx, params, get, "prompts/get"
        )
        return result

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        if self.rounds.is_retry(params):
            retried: types.ReadResourceResult | types.InputRequiredResult
            retried = await self.rounds.resume(ctx, params, "resources/read")
            return retried
        uri = str(params.uri)
        owned = apps.unqualified(uri)  # a `ui://` URI two servers use, qualified by its server
        if owned is not None and owned[0] in self.servers:
            servers, asked = [owned[0]], owned[1]
        else:
            servers, asked = await self._servers_for(uri), uri
        if not servers:
            message = f"Resource not found: {uri} (no server offers resources)."
            raise resource_not_found(uri, ctx.protocol_version, message)

        async def read_from(server: str) -> types.ReadResourceResult | types.InputRequiredResult:
            downstream, client = await self._ready(server)

            async def read(
                caller: Caller, responses: types.InputResponses | None, state: str | None
            ) -> types.ReadResourceResult | types.InputRequiredResult:
                return await _guarded(
                    downstream,
                    client.session.read_resource(
                        asked,
                        input_responses=responses,
                        request_state=state,
                        meta=_trace(caller.ctx),
                        allow_input_required=True,
                    ),
                )

            result: types.ReadResourceResult | types.InputRequiredResult = await self.rounds.run(
                server, ctx, params, read, "resources/read"
            )
            return _as_asked(result, asked, uri)

        # Its owner first; a URI nobody listed goes to each server that might have it, in order.
        failure: MCPError | None = None
        for server in servers:
            try:
                return await read_from(server)
            except MCPError as exc:
                failure = failure or exc
        assert failure is not None
        raise read_error_for(failure, uri, ctx.protocol_version)  # a miss in the client's era (SEP-2164)

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            prompt = await self._prompt(ref.name)
            server, ref = prompt.server, ref.model_copy(update={"name": prompt.name})
        else:
            uri_template = ref.uri
            template = await self._known(None, lambda: self.offerings.template(uri_template))
            if template is None:
                held = [h for h in self.held_templates(uri_template) if h.tool == uri_template]
                if held:
                    raise MCPError(types.INVALID_PARAMS, held[0].refusal())
                raise MCPError(types.INVALID_PARAMS, f"Unknown resource template '{ref.uri}'.")
            server = template.server
        if not self._declares(server, "completions"):
            return types.CompleteResult(completion=types.Completion(values=[]))
        downstream, client = await self._ready(server)
        request = types.CompleteRequest(params=params.model_copy(update={"ref": ref, "meta": _trace(ctx)}))
        with self.callers.working_for(server, ctx) as caller, calling(caller.capabilities):
            return await _guarded(downstream, client.session.send_request(request, types.CompleteResult))

    def holds(self, connection: int, uri: str) -> bool:
        return connection in self._holders.get(uri, ())

    async def client_subscribes(self, connection: int, uri: str, subscribed: bool) -> None:
        """A handshake-era client's resources/subscribe or /unsubscribe: the servers follow `uri` while
        any client (of any mode, of either era) wants it."""
        holders = self._holders.setdefault(uri, set())
        was_followed = bool(holders) or uri in self._listened
        (holders.add if subscribed else holders.discard)(connection)
        if not holders:
            del self._holders[uri]
        followed = bool(holders) or uri in self._listened
        if followed != was_followed:
            await self.subscribe(uri, followed)

    async def listen_for(self, uri: str) -> None:
        """A modern client's listen filter names `uri`."""
        if uri not in self._listened:
            self._listened.add(uri)
            if uri not in self._holders:
                await self.subscribe(uri, True)

    async def _client_gone(self, connection: int) -> None:
        for uri in [u for u, holders in self._holders.items() if connection in holders]:
            await self.client_subscribes(connection, uri, False)
        if self.log_levels.pop(connection, None) is not None and self.log_levels:
            await self._apply_level()

    async def subscribe(self, uri: str, subscribed: bool) -> None:
        """Follow `uri` on the servers that may serve it (its owner, or matching templates)."""
        await self._known(None, lambda: self.offerings.owners_of(uri) or None)
        for name in self.offerings.servers_for_uri(uri):
            downstream = self.servers.get(name)
            if downstream is None or not self._declares(name, "subscribe"):
                continue
            try:
                await downstream.subscribe(uri, subscribed)
            except Exception as exc:  # one server refusing must not fail the client's subscription
                downstream.log.note(f"{'subscribing to' if subscribed else 'unsubscribing from'} {uri} failed: {exc}")

    def wants(self, connection: int, level: types.LoggingLevel) -> bool:
        """Whether a handshake-era client connection wants messages at `level` (all, until it sets one)."""
        floor = self.log_levels.get(connection)
        return floor is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(floor)

    async def set_level(self, connection: int, level: types.LoggingLevel) -> None:
        """A client's logging level: servers send at the most verbose level any client asked for, and
        each client hears only what it asked for (see `wants`)."""
        self.log_levels[connection] = level
        await self._apply_level()

    async def _apply_level(self) -> None:
        """Every server gets the most verbose level a connected client asked for; a server not ready
        now gets it when it is (`Downstream` keeps it), and one server's refusal stops no other."""
        level = min(self.log_levels.values(), key=LOG_LEVELS.index)
        for downstream in list(self.servers.values()):
            try:
                await downstream.set_log_level(level)
            except Exception as exc:  # that server's trouble: noted in its pane
                downstream.log.note(f"setting the log level to {level} failed: {exc}")

    # Plumbing -------------------------------------------------------------------------------------

    async def _prompt(self, name: str) -> Prompt:
        """The prompt clients call `name`; refused if unknown, or held for review (with why)."""
        prompt = self.offerings.prompt(name)
        if prompt is None and (why := self.held_prompt(name)) is not None:
            raise MCPError(types.INVALID_PARAMS, why)
        prompt = prompt or await self._known(name, lambda: self.offerings.prompt(name))
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, self.held_prompt(name) or f"Unknown prompt '{name}'.")
        return prompt

    async def _servers_for(self, uri: str) -> list[str]:
        """The servers to ask for `uri` (`Offerings.servers_for_uri`) but those whose held template
        would route it; refused with the held template's reason when nothing else claims it."""
        owners = self.offerings.owners_of(uri)
        if not owners and not self.held_templates(uri):  # maybe a server's that is starting
            await self._known(None, lambda: self.offerings.owners_of(uri) or None)
            owners = self.offerings.owners_of(uri)
        held = self.held_templates(uri)
        if held and not owners:
            raise MCPError(types.INVALID_PARAMS, held[0].refusal())
        holding = {h.server for h in held} - set(owners)
        return [s for s in self.offerings.servers_for_uri(uri) if s not in holding]

    async def _known(self, name: str | None, lookup: Callable[[], T | None]) -> T | None:
        """`lookup()`; on a miss, after waiting while a server that could own `name` (None: any) is
        starting and the lookup still misses (`StartingServers`)."""
        found = lookup()
        if found is None:

            def unknown(server: str) -> bool:
                return self.offerings.server_offers(server) is None

            await self.starting.wait(lambda: self.starting.could_own(name, unknown), lambda: lookup() is not None)
            found = lookup()
        return found

    def _declares(self, server: str, what: str) -> bool:
        downstream = self.servers.get(server)
        capabilities = downstream.declared if downstream else None
        if capabilities is None:
            return False
        if what == "subscribe":
            return bool(capabilities.resources and capabilities.resources.subscribe)
        return getattr(capabilities, what, None) is not None

    async def _ready(self, server: str) -> tuple[Downstream, Client]:
        downstream = self.servers.get(server)
        if downstream is None:
            raise MCPError(types.INVALID_PARAMS, f"Server '{server}' is not configured any more.")
        try:
            return downstream, await downstream.ready_client()
        except Unavailable as exc:
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None


def _trace(ctx: ServerRequestContext[Any]) -> types.RequestParamsMeta | None:
    """The client's trace context for the server's request (`trace_context`)."""
    return cast(types.RequestParamsMeta, trace_of(ctx.meta))


def _as_asked(
    result: types.ReadResourceResult | types.InputRequiredResult, asked: str, uri: str
) -> types.ReadResourceResult | types.InputRequiredResult:
    """The contents of a qualified `ui://` URI named as the client asked for them (the server's own
    URI inside is what it wrote); every other byte as the server sent it."""
    if asked == uri or not isinstance(result, types.ReadResourceResult):
        return result
    contents = [c.model_copy(update={"uri": uri}) if str(c.uri) == asked else c for c in result.contents]
    return result.model_copy(update={"contents": contents})


async def _guarded(server: Downstream, request: Awaitable[T]) -> T:
    """The server's answer, within its callTimeout; anything but its own protocol error is named."""
    try:
        with anyio.fail_after(server.settings.call_timeout):
            return await request
    except TimeoutError:
        raise MCPError(
            types.REQUEST_TIMEOUT, f"Server '{server.name}' did not answer within {server.settings.call_timeout:g} s."
        ) from None
    except MCPError:
        raise  # the server's own answer: its code and message reach the client as they are
    except Exception as exc:  # boundary: a broken connection reads as the server's trouble
        logger.debug("%s: request failed", server.name, exc_info=True)
        raise MCPError(types.INTERNAL_ERROR, f"Server '{server.name}' failed: {type(exc).__name__}: {exc}") from None
