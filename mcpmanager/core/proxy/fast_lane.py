"""The fast lane for the common tools/call: a tool named by its exposed name (or discovery's
call_tool naming one), with arguments it declares, on a ready stdio server.

Such a call needs none of what the full path (`Router.call`) is for: no name to resolve or argument
to repair, no question for anyone, no era to translate, no progress to relay. The lane is a server
middleware, so it sees the request after the SDK's dispatcher (which owns its id, its cancellation
and its answer) but before the typed handler: it decides on the raw parameters, writes the call
to the server as bytes (`RawCalls`) and returns the server's `result` as the server wrote it. What
the full path records is kept here through the same `CallBook`: the count, the activity entry, the
call in flight on its server (so a server asking its client something, or logging, reaches this
client), the text of a call that raised, and learning from use. Anything else goes on to the full
path, so a call the lane declines is answered exactly as before.

The server's result is sieved through the client's version of the protocol, as the full path's
answer is (a 2026-07-28 server's `resultType` means nothing to a handshake-era client), and a
2026-07-28 client's answer gets its `resultType` and mcpmanager's identity stamp as the SDK's
server gives a handler's. A question asked during the call is answered the full path's way
(`Rounds`): a 2026-07-28 server's, by retrying through the session; one for a 2026-07-28 client, by
parking the call and answering with an `InputRequiredResult` (the client's retry goes the full
path, which resumes it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy.approval import Approvals
from mcpmanager.core.proxy.call_book import Call, CallBook
from mcpmanager.core.proxy.callers import Caller
from mcpmanager.core.proxy.trace_context import trace_of
from mcpmanager.core.resolve.resolver import Resolver
from mcpmanager.core.sdk_compat import initialize_accepted
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.protocol_errors import passes
from mcpmanager.core.supervisor.raw_calls import RawCalls
from mcpmanager.core.supervisor.task_calls import may_be_task
from mcpmanager.core.supervisor.tool_calls import RawOutcome, shapeless
from mcpmanager.core.tool_results import error_result

_PLAIN = frozenset({"name", "arguments", "_meta"})  # what a call the lane may take can hold
_TEXT_ONLY = frozenset({"content", "isError", "resultType"})  # (`_text_only`)
Remember = Callable[[ServerRequestContext[Any, Any]], object]


class Routes(Protocol):
    """What the lane reads of the router to admit a call, and the book it keeps a call in (it cannot
    import the router: the router holds the lane)."""

    @property
    def catalogue(self) -> Catalogue: ...
    @property
    def servers(self) -> Mapping[str, Downstream]: ...
    @property
    def resolver(self) -> Resolver: ...
    @property
    def approvals(self) -> Approvals: ...
    @property
    def book(self) -> CallBook: ...


@dataclass(frozen=True, slots=True)
class Admitted:
    """A call the lane takes, and what it found deciding so."""

    name: str
    arguments: dict[str, Any] | None
    tool: CatalogueTool
    downstream: Downstream
    lane: RawCalls
    how: str | None  # how the name resolved (for the activity log)
    own_rule: bool  # allowed by the tool's own approval setting
    via: str  # "direct", or "call_tool" (discovery's meta-tool, unwrapped)


class FastLane:
    def __init__(self, routes: Routes) -> None:
        self._routes = routes
        self.enabled = True  # off: every call goes the full path (to compare the two)
        self.taken = 0  # calls the lane answered (the rest went the full path)
        self.ahead = 0  # of those, taken off the wire ahead of the SDK's session (`wire_lane`)

    def middleware(self, server: Server[Any], meta_tools: bool, remember: Remember) -> Any:
        """The lane as a middleware of one mode's `server` (`meta_tools`: discovery mode, where a
        name that is not a catalogue tool's may be a meta-tool's: the lane unwraps a call_tool of a
        catalogue tool by its name, and the full path decides the rest).
        `remember`: what the mode's handlers do with each request's context (a handshake-era
        client is kept, to be told of changes), done here for the calls the lane takes."""

        async def lane(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
            if ctx.method == "tools/call" and "tools/call" not in server.cache_hints:
                taken = await self.call(ctx, meta_tools, remember)
                if taken is not None:
                    return stamped(server, ctx.protocol_version, taken)
            return await call_next(ctx)

        return lane

    async def call(
        self, ctx: ServerRequestContext[Any, Any], meta_tools: bool, remember: Remember = lambda ctx: None
    ) -> dict[str, Any] | None:
        """The call's result in the client's version of the protocol (without a 2026-07-28 answer's
        server stamp: `stamped`), or None when the lane does not take it (the full path does)."""
        taken = self.admit(ctx, meta_tools)
        return None if taken is None else await self.run(ctx, taken, remember)

    def admit(self, ctx: ServerRequestContext[Any, Any], meta_tools: bool) -> Admitted | None:
        """Whether the lane takes this call (decided at once, nothing awaited: a caller ahead of the
        SDK's session hands a declined call on in the order it came)."""
        routes = self._routes
        params = ctx.params
        if not self.enabled or not _plain(params):
            return None
        assert params is not None  # (`_plain`)
        name, arguments = params.get("name"), params.get("arguments")
        if type(name) is not str or not (arguments is None or type(arguments) is dict):
            return None
        if not initialize_accepted(ctx.session):  # the full path answers as the SDK does
            return None
        via = "direct"
        if (meta_tools and name in meta.NAMES) or routes.catalogue.get(name) is None:
            # (a meta-tool's own name is the meta-tool's in discovery mode, as on the full path)
            if not meta_tools or name != meta.CALL:
                return None  # another name (a meta-tool, one to resolve, a miss): the full path resolves it once
            # discovery's call_tool of a catalogue tool by its name: the call it wraps, as the full path unwraps it
            target, (arguments, problem) = meta.argument(arguments, "tool_name"), meta.tool_arguments(arguments)
            if type(target) is not str or problem is not None or routes.catalogue.get(target) is None:
                return None
            name, via = target, meta.CALL
        plan = routes.resolver.plan(name, arguments, via == meta.CALL, search=meta_tools)
        tool, checked = plan.tool, plan.checked
        if plan.error is not None or tool is None or checked is None or checked.renames or tool.app_only:
            return None  # (an MCP App's app-only tool: the full path decides who may call it)
        rule = routes.approvals.rule(tool)
        downstream = routes.servers.get(tool.server)
        if rule.policy != "allow" or downstream is None:
            return None
        if downstream.declared is not None and may_be_task(tool.spec, downstream, downstream.declared):
            return None  # it may answer with a task (`tasks`)
        lane = downstream.raw_lane()
        if lane is None:
            return None
        return Admitted(name, arguments, tool, downstream, lane, plan.resolution.how, rule.own, via)

    async def run(self, ctx: ServerRequestContext[Any, Any], taken: Admitted, remember: Remember) -> dict[str, Any]:
        """Answer a call `admit` took."""
        book = self._routes.book
        name, arguments, tool, downstream, lane = taken.name, taken.arguments, taken.tool, taken.downstream, taken.lane
        remember(ctx)
        book.received()
        self.taken += 1
        call = book.begin(
            ctx,
            name,
            taken.via,
            server=tool.server,
            tool=tool.name,
            exposed=tool.exposed,
            how=taken.how,
            renames=(),
            approval="allowed by its setting" if taken.own_rule else None,
        )
        sent = False

        async def send(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
            """The first send as bytes; a 2026-07-28 server's retries with answers the session's way."""
            nonlocal sent
            if sent:
                return await downstream.call_tool(tool.name, arguments, None, answers, state, trace_of(caller.ctx.meta))
            sent = True
            result = await downstream.call_tool_raw(lane, tool.name, arguments, trace_of(ctx.meta))
            if caller.ctx is not ctx and isinstance(result, dict):  # parked, then resumed: the full path answers
                return _typed(result, tool)
            return result

        typed = types.CallToolRequestParams.model_construct(name=name, arguments=arguments)
        outcome: RawOutcome
        try:
            with book.cancellable(call):
                outcome = await book.in_flight(tool, call, typed, send)
        except Exception as exc:  # boundary: a bug here must reach the model as text, not -32603
            if passes(exc):  # ...but an error the spec defines reaches the client as that error
                book.finish(call, "error", error_result(str(exc)), soon=True)
                raise
            outcome = book.failed(name, tool, exc)
        return self._finish(call, tool, outcome)

    def _finish(self, call: Call, tool: CatalogueTool, outcome: RawOutcome) -> dict[str, Any]:
        """The result in the client's version of the protocol (sieved as the full path's answer is),
        and the call finished in its book."""
        ctx = call.ctx
        dumped = _without_server_info(outcome) if isinstance(outcome, dict) else _dumped(outcome)
        if "resultType" not in dumped and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            dumped = {**dumped, "resultType": "complete"}  # a handshake-era server's result: complete
        try:
            text_only = _text_only(dumped) if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else None
            result = text_only or serialize_server_result("tools/call", ctx.protocol_version, dumped)
        except ValueError:
            result = serialize_server_result(
                "tools/call", ctx.protocol_version, _dumped(shapeless(tool.server, tool.name))
            )
        failed = result.get("isError") is True
        self._routes.book.finish(call, "error" if failed else "ok", result, tool.key, soon=True)
        return result


def stamped(server: Server[Any], version: str, result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 answer as the SDK's server finishes a handler's (the lane answers before it):
    its `resultType`, and mcpmanager's identity in `_meta` unless the result carries one."""
    if version not in MODERN_PROTOCOL_VERSIONS:
        return result
    result.setdefault("resultType", "complete")
    meta = result.get("_meta")
    if meta is None:
        result["_meta"] = {types.SERVER_INFO_META_KEY: server.server_info_stamp}
    elif isinstance(meta, dict) and meta.get(types.SERVER_INFO_META_KEY) is None:
        result["_meta"] = {**meta, types.SERVER_INFO_META_KEY: server.server_info_stamp}
    return result


def _typed(result: dict[str, Any], tool: CatalogueTool) -> types.CallToolResult:
    """A raw result as the full path's results are (for a parked call its retry resumes)."""
    try:
        return types.CallToolResult.model_validate(_without_server_info(result), by_name=False)
    except ValueError:
        return shapeless(tool.server, tool.name)


def _dumped(result: types.CallToolResult | types.InputRequiredResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _plain(params: Mapping[str, Any] | None) -> bool:
    """Only a name, arguments and a `_meta` that asks for no progress: nothing the full path must
    handle (a retry's `inputResponses`/`requestState`, a task, progress to relay)."""
    if not isinstance(params, Mapping) or not _PLAIN.issuperset(params):
        return False
    meta = params.get("_meta")
    return meta is None or (isinstance(meta, Mapping) and "progressToken" not in meta)


def _without_server_info(result: dict[str, Any]) -> dict[str, Any]:
    """Drop a downstream's identity stamp, as the full path does (a handshake-era server has none)."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or types.SERVER_INFO_META_KEY not in meta:
        return result
    rest = {k: v for k, v in meta.items() if k != types.SERVER_INFO_META_KEY}
    return {**result, "_meta": rest} if rest else {k: v for k, v in result.items() if k != "_meta"}


def _text_only(result: dict[str, Any]) -> dict[str, Any] | None:
    """A result of text blocks alone (most results), as a handshake-era version's sieve gives it back
    (`serialize_server_result`: the same blocks and isError, a 2026-07-28 server's `resultType`
    dropped) without validating and dumping it again; None for any other result, which is sieved.
    `tests/core/proxy/test_text_only.py` holds this to the sieve in every handshake-era version."""
    if not _TEXT_ONLY.issuperset(result) or result.get("resultType", "complete") != "complete":
        return None
    content, is_error = result.get("content"), result.get("isError", False)
    if type(content) is not list or type(is_error) is not bool:
        return None
    if not all(type(block) is dict and len(block) == 2 and _is_text(block) for block in content):
        return None
    return {"content": content, "isError": is_error} if "isError" in result else {"content": content}


def _is_text(block: dict[str, Any]) -> bool:
    return block.get("type") == "text" and type(block.get("text")) is str
