"""`mcpmanager connect`: a client's stdio relayed to the user's one engine over Streamable HTTP.

A relay of JSON-RPC text, not an MCP client: it never builds the SDK's message models, so it starts
in a fraction of a second (importing the SDK alone takes most of one) and passes every message
through as the client and the engine wrote it — requests, responses, notifications (list_changed,
progress, logging), cancellation.

What Streamable HTTP needs and stdio lacks, the relay adds: the bearer token; the session id the
engine gives the handshake (`initialize`); per request the headers the endpoint routes the protocol
eras by — `MCP-Protocol-Version` (a modern request carries its version in `_meta`; a handshake-era
session uses the version `initialize` agreed on), `MCP-Method`, `MCP-Name`; one POST per request,
answered as JSON or as an event stream read until that request's answer; and, for a handshake-era
session, the GET stream on which the engine sends what it sends of its own accord (list_changed).
A modern client's cancellation aborts its request's POST (the 2026 HTTP wire has no client-to-server
notifications: closing the stream is the signal).

When the engine goes away (restarted, updated, quit and started again by another client), the
relay finds or starts one again and carries on: the client's `initialize` is replayed to the new
engine (its answer kept from the client, which has one already), requests that change nothing are
sent again, and only the tool calls in flight fail — with an isError result saying they may or may
not have run — since calling a tool twice could do its work twice. A handshake-era client is then
told `tools/list_changed`: the new engine's tools may differ.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2

logger = logging.getLogger(__name__)

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
# Methods whose request names a thing the endpoint may route by (the SDK's NAME_BEARING_METHODS).
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
NOT_REPEATED = frozenset({"tools/call"})  # in flight when the engine went away: may have run already
MAYBE_RUN = "the call may or may not have run. Check before calling it again."
INTERRUPTED = f"mcpmanager's engine went away during this call (it was restarted or quit); {MAYBE_RUN}"
RECONNECT_PAUSE = 0.2
TIMEOUT = httpx2.Timeout(30.0, read=None)  # a tool call (and an event stream) may take as long as it takes
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")  # as the SDK's: visible ASCII survives a header
_B64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")

NOT_JSON = object()
Endpoint = tuple[str, str]  # (URL, bearer token)
FindEngine = Callable[[], Endpoint]  # blocking; starts an engine if need be; raises when none can be had
WriteLine = Callable[[bytes], Awaitable[None]]
Message = dict[str, Any]


class Lost(Exception):
    """The engine is gone: refused, reset, or a new engine that does not know this session."""

    generation = -1  # of the connection that was lost (set where it is raised)


@dataclass
class _Request:
    raw: bytes
    message: Message
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    refused: bool = False  # the connection was refused: the engine never saw it, so it is safe to send again


class Relay:
    def __init__(self, find_engine: FindEngine, write: WriteLine, endpoint: Endpoint | None = None) -> None:
        """`endpoint`: the engine already found (`connect` looks before it takes over stdio)."""
        self._find = find_engine
        self._first = endpoint
        self._write = write
        self._url = ""
        self._token = ""
        self._http: httpx2.AsyncClient | None = None
        self._session: str | None = None
        self._version: str | None = None  # the handshake's
        self._initialize: bytes | None = None
        self._initialized: bytes | None = None
        self._pending: dict[Any, _Request] = {}
        self._connected = anyio.Event()
        self._reconnecting = False
        self._dormant = False  # the engine is gone and nothing waits for one: reconnect on the next request
        self._generation = 0  # counts connections to an engine
        self._dead = 0  # the last generation found gone
        self._replays = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self.connections = 0

    # Lifecycle ------------------------------------------------------------------------------------

    async def run(self, lines: AsyncIterator[bytes]) -> None:
        """Relay until the client closes stdin (`lines` ends)."""
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http, anyio.create_task_group() as tg:
            self._http, self._tg = http, tg
            await self._connect()
            self._connected.set()
            async for line in lines:
                if line.strip():
                    await self._from_client(line)
            tg.cancel_scope.cancel()
        await self._end_session()

    async def _connect(self) -> None:
        found, self._first = self._first, None
        if found is None:
            found = await anyio.to_thread.run_sync(self._find)
        self._url, self._token = found
        self._session = None
        self._generation += 1
        self.connections += 1

    async def _end_session(self) -> None:
        """Tell the engine this client is gone (it frees the session at once)."""
        if self._session is None:
            return
        with anyio.move_on_after(2), anyio.CancelScope(shield=True):
            try:
                async with httpx2.AsyncClient(timeout=2) as http:
                    await http.delete(self._url, headers=self._headers(None))
            except httpx2.HTTPError:
                pass

    # Client → engine ------------------------------------------------------------------------------

    async def _from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            logger.warning("not JSON from the client (dropped): %r", line[:200])
            return
        if not isinstance(message, dict):  # a batch: pass it through as it is
            self._spawn(self._send(line, None))
            return
        method = message.get("method")
        if "id" in message and isinstance(method, str):  # a request
            if self._dormant:
                self._dormant = False
                self._spawn(self._revive())
            request = _Request(line, message)
            self._pending[message["id"]] = request
            if method == "initialize":
                self._initialize = line
            self._spawn(self._request(request))
            return
        if method == "notifications/initialized":
            self._initialized = line
        if method == "notifications/cancelled" and self._cancel_modern(message):
            return
        self._spawn(self._send(line, message))

    def _cancel_modern(self, message: Message) -> bool:
        """A modern request is cancelled by aborting its POST; True when that is what was done."""
        request_id = (message.get("params") or {}).get("requestId")
        request = self._pending.get(request_id)
        if request is None or _version_of(request.message) is None:
            return False
        request.scope.cancel()
        self._pending.pop(request_id, None)
        return True

    def _spawn(self, work: Awaitable[None]) -> None:
        assert self._tg is not None

        async def guarded() -> None:
            try:
                await work
            except Lost as exc:
                await self._lost(exc)

        self._tg.start_soon(guarded)

    async def _request(self, request: _Request) -> None:
        with request.scope:
            await self._connected.wait()
            await self._post(request.raw, request.message, request)

    async def _send(self, raw: bytes, message: Message | None) -> None:
        """A notification (or a batch), once there is an engine to send it to."""
        await self._connected.wait()
        await self._post(raw, message)

    async def _post(self, raw: bytes, message: Message | None, request: _Request | None = None) -> None:
        assert self._http is not None
        headers, generation = self._headers(message), self._generation
        try:
            async with self._http.stream("POST", self._url, content=raw, headers=headers) as response:
                await self._answered(response, message, request)
        except httpx2.TransportError as exc:  # refused, reset, closed mid-answer
            if request is not None and isinstance(exc, httpx2.ConnectError):
                request.refused = True
            raise _lost_at(generation, f"{type(exc).__name__}: {exc}") from exc
        except Lost as exc:
            exc.generation = generation
            raise

    async def _answered(self, response: httpx2.Response, message: Message | None, request: _Request | None) -> None:
        status = response.status_code
        if status == 404 and self._session is not None and (message or {}).get("method") != "initialize":
            raise Lost("the engine no longer knows this session")  # a new engine at the same address
        if status in (401, 403, 421):
            text = (await response.aread()).decode(errors="replace").strip()
            raise Lost(f"the engine refused the bridge ({status}: {text})")
        if message is not None and message.get("method") == "initialize" and response.headers.get("mcp-session-id"):
            self._session = response.headers["mcp-session-id"]
        if status == 202 or (request is None and status < 300):
            await response.aread()
            if message is not None and message.get("method") == "notifications/initialized":
                self._spawn(self._listen(self._generation))
            return
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind == "text/event-stream":
            async for data in _events(response):
                message = _parse(data)
                await self._to_client(data, message)
                if request is not None and _answers(message, request.message.get("id")):
                    return
            if request is not None:  # the stream ended without the answer: the engine is stopping
                raise Lost("the engine closed the answer stream")
            return
        body = await response.aread()
        answer = _parse(body)
        if request is not None and not _answers(answer, request.message.get("id")):
            # An HTTP error that is no JSON-RPC answer (a request cut off as the engine stops is a
            # plain-text 500): the client still gets an answer, or it would wait forever.
            text = body.decode(errors="replace").strip()[:200]
            logger.warning("the engine answered HTTP %s without a JSON-RPC answer: %r", status, text)
            await self._unanswered(request, f"HTTP {status}{': ' + text if text else ''}")
        elif body.strip():
            await self._to_client(body, answer)

    # Engine → client ------------------------------------------------------------------------------

    async def _listen(self, generation: int) -> None:
        """The handshake session's GET stream: what the engine sends of its own accord."""
        assert self._http is not None
        while generation == self._generation and generation != self._dead:
            try:
                async with self._http.stream("GET", self._url, headers=self._headers(None, accept_sse=True)) as stream:
                    if stream.status_code == 405:  # the engine offers none
                        return
                    if stream.status_code >= 400:
                        raise _lost_at(generation, f"the engine refused the event stream ({stream.status_code})")
                    async for data in _events(stream):
                        await self._to_client(data, _parse(data))
            except httpx2.TransportError as exc:
                raise _lost_at(generation, f"event stream: {type(exc).__name__}") from exc
            await anyio.sleep(RECONNECT_PAUSE)

    async def _to_client(self, data: bytes, message: Any) -> None:
        """`data` as the engine wrote it; `message` is it parsed (`_parse`), to look at."""
        if message is NOT_JSON:
            logger.warning("not JSON from the engine (dropped): %r", data[:200])
            return
        if isinstance(message, dict) and "id" in message and "method" not in message:
            request_id = message["id"]
            if isinstance(request_id, str) and request_id.startswith("mcpmanager-bridge-"):
                return  # the answer to a replayed initialize: the client has one already
            request = self._pending.pop(request_id, None)
            if request is not None and request.message.get("method") == "initialize":
                version = (message.get("result") or {}).get("protocolVersion")
                self._version = version if isinstance(version, str) else None
        await self._write(data.strip() + b"\n")

    async def _unanswered(self, request: _Request, why: str) -> None:
        request_id = request.message.get("id")
        if request.message.get("method") in NOT_REPEATED:
            await self._interrupted(request, f"mcpmanager's engine failed during this call ({why}); {MAYBE_RUN}")
            return
        self._pending.pop(request_id, None)
        error = {"code": -32603, "message": f"mcpmanager's engine did not answer ({why})"}
        await self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n")

    # The engine went away -------------------------------------------------------------------------

    async def _lost(self, exc: Lost) -> None:
        """The engine of this connection is gone. Tool calls in flight fail; other requests wait for
        the next engine. That is looked for only when a request needs one: a user who quit the app
        did not ask for another one to start while the clients sit idle."""
        if exc.generation != self._generation or self._dead == self._generation:
            return  # an older connection's, or this loss is being handled already
        self._dead = self._generation
        self._connected = anyio.Event()
        logger.info("lost the engine (%s)", exc)
        interrupted = [r for r in self._pending.values() if r.message.get("method") in NOT_REPEATED and not r.refused]
        for request in interrupted:
            request.scope.cancel()
            await self._interrupted(request)
        repeat = [r for r in self._pending.values() if r not in interrupted]
        for request in repeat:
            request.scope.cancel()
            fresh = _Request(request.raw, request.message)
            self._pending[request.message.get("id")] = fresh
            self._spawn(self._request(fresh))  # waits for `_connected`
        if repeat:
            await self._revive()
        else:
            self._dormant = True

    async def _revive(self) -> None:
        """Reach an engine again (starting one if need be) and let the waiting requests through."""
        if self._reconnecting:
            return
        self._reconnecting = True
        try:
            await self._reconnect()
        finally:
            self._reconnecting = False
        self._connected.set()
        if self._initialize is not None:  # a handshake-era client; modern clients re-listen on their own
            note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await self._write(json.dumps(note).encode() + b"\n")

    async def _reconnect(self) -> None:
        """Until an engine takes the client's handshake. The one that went away may still advertise
        itself for a moment while it stops its servers; `find` raises once none can be had."""
        while True:
            await anyio.sleep(RECONNECT_PAUSE)
            await self._connect()
            if self._initialize is None:
                return
            try:
                await self._replay()
                return
            except Lost as exc:
                logger.info("the engine at %s is not serving yet (%s)", self._url, exc)

    async def _interrupted(self, request: _Request, text: str = INTERRUPTED) -> None:
        """The tool call's answer, as a tool error the model can read and act on."""
        request_id = request.message.get("id")
        self._pending.pop(request_id, None)
        result: Message = {"content": [{"type": "text", "text": text}], "isError": True}
        if _version_of(request.message) is not None:
            result["resultType"] = "complete"  # modern results say what kind they are
        await self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")

    async def _replay(self) -> None:
        """The client's handshake again, for the new engine (the client knows nothing of it)."""
        assert self._initialize is not None
        original = json.loads(self._initialize)
        self._replays += 1
        original["id"] = f"mcpmanager-bridge-{self._replays}"
        replay = json.dumps(original).encode()
        await self._post(replay, original, _Request(replay, original))
        if self._initialized is not None:
            await self._post(self._initialized, json.loads(self._initialized))

    # Headers ---------------------------------------------------------------------------------------

    def _headers(self, message: Message | None, accept_sse: bool = False) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "text/event-stream" if accept_sse else "application/json, text/event-stream",
        }
        if not accept_sse:
            headers["Content-Type"] = "application/json"
        if self._session is not None:
            headers["Mcp-Session-Id"] = self._session
        modern = _version_of(message) if message is not None else None
        version = modern or (self._version if (message or {}).get("method") != "initialize" else None)
        if version:
            headers["MCP-Protocol-Version"] = version
        method = (message or {}).get("method")
        if modern and isinstance(method, str):
            headers["Mcp-Method"] = method
            name = ((message or {}).get("params") or {}).get(NAME_PARAMS.get(method, ""))
            if isinstance(name, str):
                headers["Mcp-Name"] = _header_value(name)
        return headers


def _lost_at(generation: int, why: str) -> Lost:
    lost = Lost(why)
    lost.generation = generation
    return lost


def _version_of(message: Message) -> str | None:
    """The protocol version a modern request carries in its `_meta`."""
    meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) and version not in HANDSHAKE_VERSIONS else None


def _header_value(value: str) -> str:
    """As the SDK encodes a name into a header (`encode_header_value`): verbatim when it is printable
    ASCII without edge spaces, else wrapped as `=?base64?…?=` so the endpoint recovers it exactly."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _B64_SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def _parse(data: bytes) -> Any:
    """The JSON value of `data`, or NOT_JSON: each message from the engine is parsed once."""
    try:
        return json.loads(data)
    except ValueError:
        return NOT_JSON


def _answers(message: Any, request_id: Any) -> bool:
    return isinstance(message, dict) and message.get("id") == request_id and "method" not in message


async def _events(response: httpx2.Response) -> AsyncIterator[bytes]:
    """The `data` of each server-sent event (lines joined), as the SSE format defines them."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield "\n".join(data).encode()
                data = []
            continue
        field_name, _, value = line.partition(":")
        if field_name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data).encode()
