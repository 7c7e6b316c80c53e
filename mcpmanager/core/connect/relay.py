"""`mcpmanager connect`: a client's stdio relayed to the user's one engine.

A relay of JSON-RPC text, not an MCP client: it never builds the SDK's message models, so it starts
in a fraction of a second (importing the SDK alone takes most of one) and passes every message
through as the client and the engine wrote it — requests, responses, notifications (list_changed,
progress, logging), cancellation. Two links carry it: the engine's local socket, where the lines go
as they are (`socket_relay`), and its Streamable HTTP endpoint, where the engine offers no socket
(`http_relay`). This module is what both share.

When the engine goes away (restarted, updated, quit and started again by another client), the
relay finds or starts one again and carries on: the client's `initialize` is replayed to the new
engine (its answer kept from the client, which has one already), requests that change nothing are
sent again, and only the tool calls in flight fail — with an isError result saying they may or may
not have run — since calling a tool twice could do its work twice. A handshake-era client is then
told `tools/list_changed`: the new engine's tools may differ.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import anyio

from mcpmanager.core.system.line_framer import blank

logger = logging.getLogger(__name__)

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
NOT_REPEATED = frozenset({"tools/call"})  # in flight when the engine went away: may have run already
MAYBE_RUN = "the call may or may not have run. Check before calling it again."
INTERRUPTED = f"mcpmanager's engine went away during this call (it was restarted or quit); {MAYBE_RUN}"
BRIDGE_ID = "mcpmanager-bridge-"  # the id of a replayed initialize, whose answer the client never sees
RECONNECT_PAUSE = 0.2
PATIENCE = 30.0  # seconds of trying to reach an engine before the requests waiting for one are failed

NOT_JSON = object()
WriteLine = Callable[[bytes], Awaitable[None]]
Message = dict[str, Any]


class Endpoint(NamedTuple):
    """Where the engine serves `connect`: its HTTP URL (for the mode asked, or its default), its
    bearer token, its local socket when it offers one, and the mode asked (None: the engine's)."""

    url: str
    token: str
    socket: str | None = None
    mode: str | None = None


FindEngine = Callable[[], Endpoint]  # blocking; starts an engine if need be; raises when none can be had


class NoEngine(RuntimeError):
    """No engine runs and none could be had; str() says why and where to look."""


class Lost(Exception):
    """The engine is gone: refused, reset, or a new engine that does not know this session."""

    generation = -1  # of the connection that was lost (set where it is raised)


@dataclass
class Pending:
    """A client's request the engine has not answered yet."""

    raw: bytes
    message: Message
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    refused: bool = False  # no engine took it (not sent yet, its connection refused, a 503): safe to send again


class Relay:
    """The client's side of the relay; a link (a subclass) carries its messages to the engine."""

    def __init__(
        self, find_engine: FindEngine, write: WriteLine, endpoint: Endpoint | None = None, patience: float = PATIENCE
    ) -> None:
        """`endpoint`: the engine already found (`connect` looks before it takes over stdio);
        `patience`: how long requests wait while no engine can be reached."""
        self._find = find_engine
        self._patience = patience
        self._unreached: float | None = None  # since when no engine has answered (None: one does)
        self._first = endpoint
        self._write = write
        self._version: str | None = None  # the handshake's
        self._initialize: bytes | None = None  # the client's handshake: replayed to each new engine
        self._initialize_id: Any = None
        self._accepted = False  # an engine took that handshake: a later `initialize` does not replace it
        self._initialized: bytes | None = None
        self._pending: dict[Any, Pending] = {}
        self._connected = anyio.Event()
        self._reconnecting = False
        self._dormant = False  # the engine is gone and nothing waits for one: reconnect on the next request
        self._generation = 0  # counts connections to an engine
        self._dead = 0  # the last generation found gone
        self._replays = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self.connections = 0

    # What a link does -----------------------------------------------------------------------------

    async def _open(self, endpoint: Endpoint) -> None:
        """Connect to the engine at `endpoint` (Lost when it cannot be reached)."""
        raise NotImplementedError

    async def _forward(self, raw: bytes, message: Message | None, request: Pending | None) -> None:
        """Send what the client sent (a request when `request`; `message` None: a batch)."""
        raise NotImplementedError

    async def _resend(self, request: Pending) -> None:
        """Send a request again once connected to the next engine (it waits for `_connected`)."""
        raise NotImplementedError

    async def _replay(self) -> None:
        """The client's handshake again, for a new engine (the client knows nothing of it)."""
        raise NotImplementedError

    async def _end_session(self) -> None:
        """The client is gone: let the engine know at once."""

    def _cancel_modern(self, message: Message) -> bool:
        """A cancellation the link carries its own way; True when it did."""
        return False

    # Lifecycle ------------------------------------------------------------------------------------

    async def run(self, lines: AsyncIterator[bytes]) -> None:
        """Relay until the client closes stdin (`lines` ends)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                await self._connect()
            except Lost as exc:  # advertised but not serving (stopping, or its socket not up again)
                await self._lost(exc)  # nothing waits yet: the first request looks again
            else:
                self._connected.set()
            async for line in lines:
                if not blank(line):
                    await self._from_client(line)
            tg.cancel_scope.cancel()
        await self._end_session()

    async def _connect(self) -> None:
        found, self._first = self._first, None
        if found is None:
            found = await anyio.to_thread.run_sync(self._find)
        self._generation += 1
        self.connections += 1
        await self._open(found)

    def _spawn(self, work: Awaitable[None]) -> None:
        assert self._tg is not None

        async def guarded() -> None:
            try:
                await work
            except Lost as exc:
                await self._lost(exc)

        self._tg.start_soon(guarded)

    # Client → engine ------------------------------------------------------------------------------

    async def _from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # (nested past the parser's depth: not a message either)
            logger.warning("not JSON from the client (dropped): %r", line[:200])
            return
        if not isinstance(message, dict):  # a batch: pass it through as it is
            await self._forward(line, None, None)
            return
        method = message.get("method")
        if "id" in message and isinstance(method, str) and trackable(message["id"]):  # a request
            if self._dormant:
                self._dormant = False
                self._unreached = None  # (idle without an engine is not waiting for one)
                self._spawn(self._revive())
            request = Pending(line, message)
            self._pending[message["id"]] = request
            if method == "initialize" and not self._accepted:  # (a second one, once accepted, is refused)
                self._initialize, self._initialize_id = line, message["id"]
            await self._forward(line, message, request)
            return
        if method == "notifications/initialized" and self._initialized is None:
            self._initialized = line
        if method == "notifications/cancelled" and self._cancel_modern(message):
            return
        await self._forward(line, message, None)

    # Engine → client ------------------------------------------------------------------------------

    async def _to_client(self, data: bytes, message: Any) -> None:
        """`data` as the engine wrote it; `message` is it parsed (`parse`), to look at."""
        self._reached()
        if message is NOT_JSON:
            logger.warning("not JSON from the engine (dropped): %r", data[:200])
            return
        if isinstance(message, dict) and "id" in message and "method" not in message:
            request_id = message["id"]
            if isinstance(request_id, str) and request_id.startswith(BRIDGE_ID):
                self._replay_answered(message)
                return  # the answer to a replayed initialize: the client has one already
            request = self._pending.pop(request_id, None)
            result = message.get("result")
            if request is not None and request.message.get("method") == "initialize" and isinstance(result, dict):
                self._accepted = True  # (a refused one changes nothing)
                version = result.get("protocolVersion")
                self._version = version if isinstance(version, str) else None
        await self._write(_one_line(data))

    def _replay_answered(self, message: Message) -> None:
        """The new engine answered the replayed handshake (a link waiting for it is told here)."""

    async def _unanswered(self, request: Pending, why: str) -> None:
        if request.message.get("method") in NOT_REPEATED:
            await self._interrupted(request, f"mcpmanager's engine failed during this call ({why}); {MAYBE_RUN}")
            return
        await self._error(request, -32603, f"mcpmanager's engine did not answer ({why})")

    async def _error(self, request: Pending, code: int, text: str) -> None:
        """The request's answer, a JSON-RPC error."""
        request_id = request.message.get("id")
        self._pending.pop(request_id, None)
        error = {"code": code, "message": text}
        await self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n")

    # The engine went away -------------------------------------------------------------------------

    async def _lost(self, exc: Lost) -> None:
        """The engine of this connection is gone. Tool calls in flight fail; other requests wait for
        the next engine. That is looked for only when a request needs one: a user who quit the app
        did not ask for another one to start while the clients sit idle."""
        if exc.generation != self._generation or self._dead == self._generation:
            return  # an older connection's, or this loss is being handled already
        self._dead = self._generation
        if self._connected.is_set():  # (an unset one may have waiters: `_revive` sets it)
            self._connected = anyio.Event()
        logger.info("lost the engine (%s)", exc)
        interrupted = [r for r in self._pending.values() if r.message.get("method") in NOT_REPEATED and not r.refused]
        for request in interrupted:
            request.scope.cancel()
            await self._interrupted(request)
        repeat = [r for r in self._pending.values() if r not in interrupted]
        for request in repeat:
            request.scope.cancel()
            fresh = Pending(request.raw, request.message, refused=True)  # no engine has it yet
            self._pending[request.message.get("id")] = fresh
            self._spawn(self._resend(fresh))
        if self._unreached is None:
            self._unreached = anyio.current_time()
        if not repeat:
            self._dormant = True
        elif anyio.current_time() - self._unreached >= self._patience:
            await self._give_up(str(exc))  # (an engine that takes connections, and drops them)
        else:
            await self._revive()

    async def _revive(self) -> None:
        """Reach an engine again (starting one if need be) and let the waiting requests through."""
        if self._reconnecting:
            return
        self._reconnecting = True
        try:
            why = await self._reconnect()
        finally:
            self._reconnecting = False
        if why is not None:
            await self._give_up(why)
            return
        self._connected.set()
        if self._handshaken():  # a handshake-era client; modern clients re-listen on their own
            note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await self._write(json.dumps(note).encode() + b"\n")

    async def _reconnect(self) -> str | None:
        """Until an engine takes the client's handshake (None), or `patience` has gone by (why not).
        The one that went away may still advertise itself for a moment while it stops its servers;
        `find` raises once none can be had (NoEngine: `connect` ends)."""
        deadline = (self._unreached or anyio.current_time()) + self._patience
        while True:
            await anyio.sleep(RECONNECT_PAUSE)
            try:
                await self._connect()
                if self._handshaken():
                    await self._replay()
                return None
            except Lost as exc:
                if anyio.current_time() >= deadline:
                    return str(exc)
                logger.info("the engine found is not serving yet (%s)", exc)

    async def _give_up(self, why: str) -> None:
        """No engine answered for `patience` seconds (one is advertised, but does not serve): the
        requests waiting get an error now rather than never. The next request tries again."""
        logger.warning("no engine could be reached in %g s (%s)", self._patience, why)
        text = f"mcpmanager's engine could not be reached in {self._patience:g} s ({why}); nothing was sent"
        for request in list(self._pending.values()):
            request.scope.cancel()
            await self._error(request, -32603, text)
        self._dormant = True
        self._unreached = None  # the next request gets as long again

    def _reached(self) -> None:
        """An engine answered: whatever goes wrong next, it is waited for afresh."""
        self._unreached = None

    def _handshaken(self) -> bool:
        """Whether the client's handshake was answered (one still waiting is sent as it is, not
        replayed: the new engine would get it twice, and the client a list_changed before it)."""
        return self._initialize is not None and self._initialize_id not in self._pending

    async def _interrupted(self, request: Pending, text: str = INTERRUPTED) -> None:
        """The tool call's answer, as a tool error the model can read and act on."""
        request_id = request.message.get("id")
        self._pending.pop(request_id, None)
        result: Message = {"content": [{"type": "text", "text": text}], "isError": True}
        if version_of(request.message) is not None:
            result["resultType"] = "complete"  # modern results say what kind they are
        await self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")

    def _replayed_initialize(self) -> tuple[bytes, Message]:
        """The client's `initialize` under an id of our own (its answer is not the client's)."""
        assert self._initialize is not None
        original = json.loads(self._initialize)
        self._replays += 1
        original["id"] = f"{BRIDGE_ID}{self._replays}"
        return json.dumps(original).encode(), original


def lost_at(generation: int, why: str) -> Lost:
    lost = Lost(why)
    lost.generation = generation
    return lost


def version_of(message: Message) -> str | None:
    """The protocol version a modern request carries in its `_meta`."""
    meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) and version not in HANDSHAKE_VERSIONS else None


def _one_line(data: bytes) -> bytes:
    """`data` without the whitespace around it, and one newline: as it came in the usual case (a
    line that ends in its newline alone), without copying a line that may be megabytes long."""
    if data[-1:] == b"\n" and not data[:1].isspace() and not data[-2:-1].isspace():
        return data
    return data.strip() + b"\n"


def parse(data: bytes) -> Any:
    """The JSON value of `data`, or NOT_JSON: each message from the engine is parsed once."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


def trackable(request_id: Any) -> bool:
    """An id a request in flight can be kept by: JSON-RPC's string, number or null. Anything else
    (a list, an object) is passed on untracked, for the engine to refuse, rather than end `connect`."""
    return request_id is None or isinstance(request_id, str | int | float)


def answers(message: Any, request_id: Any) -> bool:
    return isinstance(message, dict) and message.get("id") == request_id and "method" not in message
