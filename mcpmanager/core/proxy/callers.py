"""Which client a server is working for: the requests in flight on each server, and who sent them.

A server that asks its client something (sampling, elicitation, roots) during a call asks
mcpmanager, which must find the client behind that call. The SDK does not tell a client which of
its requests a server's request relates to, so the rule is by what is in flight on that server:

* one client has requests in flight there: that client (its latest request);
* none: nobody can be meant (roots fall back to what all clients said: see `asking`);
* several clients: mcpmanager cannot tell which, and refuses rather than ask the wrong person.

A client is its connection: a handshake-era client's, or the pipe a 2026-07-28 client's requests
come on (`serve --stdio`, `connect`), whose requests are each a connection of their own in the SDK
but all one client's. Over HTTP a 2026-07-28 request carries nothing that says whose it is, so each
is a client of its own. A parked request (`rounds`: its round delivered, the client's retry awaited)
still counts: a handshake-era server may go on asking for it (a question of the call's that comes
after the round went out, which it asked concurrently with the first), so a question asked while it
waits and another client's request runs could be either's.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.sdk_compat import modern_outbound
from mcpmanager.core.supervisor.tool_calls import ProgressCallback

# One question a modern client must answer before the parked request can go on (see `rounds`): the
# key a 2026-07-28 server gave it (None: a question of mcpmanager's or a handshake-era server's), the
# question, and where its answer goes.
Question = tuple[str | None, types.InputRequest, "asyncio.Future[types.InputResponse | types.ErrorData]"]
_serial = itertools.count()


@dataclass(eq=False)
class Caller:
    """A client's request in flight on one server."""

    server: str
    ctx: ServerRequestContext[Any]
    key: int  # its client connection (`Connections`)
    # Who the client is (`client_of`): its connection key, or a 2026-07-28 client's pipe.
    client: Hashable = None
    # A modern client is asked by returning an InputRequiredResult from this request; questions wait
    # here for it. None where the request cannot carry one (completion, a handshake-era client).
    questions: asyncio.Queue[Question] | None = None
    order: int = field(default_factory=lambda: next(_serial))
    parked: bool = False  # between an InputRequiredResult and the client's retry: no live request
    closed: bool = False  # released (expired, cancelled): nobody will answer questions any more

    @property
    def modern(self) -> bool:
        return self.ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def capabilities(self) -> types.ClientCapabilities:
        return self.ctx.session.client_capabilities or types.ClientCapabilities()

    @property
    def client_name(self) -> str:
        params = self.ctx.session.client_params
        return params.client_info.name if params is not None else "the client"


class Callers:
    def __init__(self, connections: Connections) -> None:
        self.connections = connections
        self._on: dict[str, list[Caller]] = {}

    @contextmanager
    def working_for(self, server: str, ctx: ServerRequestContext[Any]) -> Iterator[Caller]:
        """Count `ctx` as in flight on `server` for the duration (a request that cannot park)."""
        caller = self.enter(server, ctx)
        try:
            yield caller
        finally:
            self.leave(caller)

    def enter(self, server: str, ctx: ServerRequestContext[Any], parkable: bool = False) -> Caller:
        """`ctx` is in flight on `server` until `leave`; `parkable`: the request can answer with an
        InputRequiredResult (tools/call, prompts/get, resources/read)."""
        modern = ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS
        key = self.connections.key(ctx.session)
        questions: asyncio.Queue[Question] | None = asyncio.Queue() if parkable and modern else None
        caller = Caller(server, ctx, key, questions=questions, client=client_of(ctx, key))
        self._on.setdefault(server, []).append(caller)
        return caller

    def leave(self, caller: Caller) -> None:
        callers = self._on.get(caller.server, [])
        if caller in callers:
            callers.remove(caller)
        if not callers:
            self._on.pop(caller.server, None)

    def on(self, server: str) -> list[Caller]:
        return list(self._on.get(server, ()))

    def busy(self) -> bool:
        """Whether a request is running on some server (one parked waiting for its client is not)."""
        return any(not c.parked and not c.closed for callers in self._on.values() for c in callers)

    def find(self, server: str) -> Caller | str:
        """The caller a request from `server` is for, or why there is none (a sentence)."""
        callers = self._on.get(server)
        if not callers:
            return f"no client request is in flight on server '{server}'"
        clients = {c.client for c in callers}
        if len(clients) > 1:
            return (
                f"{len(clients)} clients have requests in flight on server '{server}' and mcpmanager "
                "cannot tell which one this is for"
            )
        return max(callers, key=lambda c: c.order)


def client_of(ctx: ServerRequestContext[Any], key: int) -> Hashable:
    """Who sent a request: the pipe of a 2026-07-28 client on one (all its requests share it), else
    its connection (`key`: over HTTP a 2026-07-28 request's own)."""
    return modern_outbound(ctx.session) or key


def progress_token(ctx: ServerRequestContext[Any]) -> Any:
    """The progress token of a request (None: it asked for no progress)."""
    meta = ctx.meta or {}
    return meta.get("progress_token", meta.get("progressToken"))


def progress_relay(caller: Caller) -> ProgressCallback:
    """Progress to the request the caller is now (a parked call's retry replaces its first request)."""

    async def relay(progress: float, total: float | None, message: str | None) -> None:
        await caller.ctx.session.report_progress(progress, total, message)

    return relay
