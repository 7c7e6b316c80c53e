"""The `connect` relay over the engine's Streamable HTTP endpoint: where the engine offers no local
socket (Windows; a runtime directory whose path is too long for one), or when asked (`--http`).

What Streamable HTTP needs and stdio lacks, the relay adds: the bearer token; the session id the
engine gives the handshake (`initialize`); per request the headers the endpoint routes the protocol
eras by — `MCP-Protocol-Version` (a modern request carries its version in `_meta`; a handshake-era
session uses the version `initialize` agreed on), `MCP-Method`, `MCP-Name`; one POST per request,
answered as JSON or as an event stream read until that request's answer; and, for a handshake-era
session, the GET stream on which the engine sends what it sends of its own accord (list_changed).
A modern client's cancellation aborts its request's POST (the 2026 HTTP wire has no client-to-server
notifications: closing the stream is the signal).
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import AsyncIterator

import anyio
import httpx2

from mcpmanager.core.connect.relay import (
    PATIENCE,
    RECONNECT_PAUSE,
    Endpoint,
    FindEngine,
    Lost,
    Message,
    Pending,
    Relay,
    WriteLine,
    answers,
    lost_at,
    parse,
    trackable,
    version_of,
)

logger = logging.getLogger(__name__)

# Methods whose request names a thing the endpoint may route by (the SDK's NAME_BEARING_METHODS).
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
TIMEOUT = httpx2.Timeout(30.0, read=None)  # a tool call (and an event stream) may take as long as it takes
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")  # as the SDK's: visible ASCII survives a header
_B64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


class HttpRelay(Relay):
    def __init__(
        self, find_engine: FindEngine, write: WriteLine, endpoint: Endpoint | None = None, patience: float = PATIENCE
    ) -> None:
        super().__init__(find_engine, write, endpoint, patience)
        self._url = ""
        self._token = ""
        self._http: httpx2.AsyncClient | None = None
        self._session: str | None = None
        self._listening = 0  # the generation whose GET stream is open (generations count from 1)

    async def run(self, lines: AsyncIterator[bytes]) -> None:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            self._http = http
            await super().run(lines)

    async def _open(self, endpoint: Endpoint) -> None:
        self._url, self._token = endpoint.url, endpoint.token
        self._session = None

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

    async def _forward(self, raw: bytes, message: Message | None, request: Pending | None) -> None:
        self._spawn(self._request(request) if request is not None else self._send(raw, message))

    async def _resend(self, request: Pending) -> None:
        await self._request(request)

    def _cancel_modern(self, message: Message) -> bool:
        """A modern request is cancelled by aborting its POST; True when that is what was done."""
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        request = self._pending.get(request_id) if trackable(request_id) else None
        if request is None or version_of(request.message) is None:
            return False
        request.scope.cancel()
        self._pending.pop(request_id, None)
        return True

    async def _request(self, request: Pending) -> None:
        with request.scope:
            await self._connected.wait()
            request.refused = False  # until its connection is refused
            await self._post(request.raw, request.message, request)

    async def _send(self, raw: bytes, message: Message | None) -> None:
        """A notification (or a batch), once there is an engine to send it to."""
        await self._connected.wait()
        await self._post(raw, message)

    async def _post(self, raw: bytes, message: Message | None, request: Pending | None = None) -> None:
        assert self._http is not None
        headers, generation = self._headers(message), self._generation
        since = anyio.current_time()
        try:
            while True:
                async with self._http.stream("POST", self._url, content=raw, headers=headers) as response:
                    if not await self._not_taken(response, request):
                        await self._answered(response, message, request)
                        return
                # The engine is stopping and finishing what it runs (`serve/stopping.py`): this one
                # waits for its endpoint to close (then goes to the next engine, as refused) rather
                # than the engine being given up on, and the calls it is finishing with it. It stays
                # refused while it is sent again: that engine takes nothing new any more, and another
                # can answer at its address (this machine's one engine) only once it has exited (the
                # engine lock) and a new one has started, long after a send found the address closed
                # and ended this connection. (Counted as taken, a loss noticed during a send answered
                # the client that it may have run.)
                assert request is not None
                request.refused = True
                if anyio.current_time() - since >= self._patience:
                    raise Lost("the engine kept answering that it is stopping (503)")
                await anyio.sleep(RECONNECT_PAUSE)
        except httpx2.TransportError as exc:  # refused, reset, closed mid-answer
            if request is not None and isinstance(exc, httpx2.ConnectError):
                request.refused = True
            raise lost_at(generation, f"{type(exc).__name__}: {exc}") from exc
        except Lost as exc:
            exc.generation = generation
            raise

    @staticmethod
    async def _not_taken(response: httpx2.Response, request: Pending | None) -> bool:
        """A request the stopping engine refused to start (503): nothing ran, so it may be sent again."""
        if response.status_code != 503 or request is None:
            return False
        await response.aread()
        return True

    async def _answered(self, response: httpx2.Response, message: Message | None, request: Pending | None) -> None:
        status = response.status_code
        if status == 404 and self._session is not None and (message or {}).get("method") != "initialize":
            raise Lost("the engine no longer knows this session")  # a new engine at the same address
        if status in (401, 403, 421):
            text = (await response.aread()).decode(errors="replace").strip()
            raise Lost(f"the engine refused the bridge ({status}: {text})")
        self._reached()  # (not by a refusal: that is waited out, then reported)
        if message is not None and message.get("method") == "initialize" and response.headers.get("mcp-session-id"):
            self._session = response.headers["mcp-session-id"]
        if status == 202 or (request is None and status < 300):
            await response.aread()
            initialized = message is not None and message.get("method") == "notifications/initialized"
            if initialized and self._listening != self._generation:  # one GET stream a session (a second: 409)
                self._listening = self._generation
                self._spawn(self._listen(self._generation))
            return
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind == "text/event-stream":
            async for data in _events(response):
                message = parse(data)
                await self._to_client(data, message)
                if request is not None and answers(message, request.message.get("id")):
                    return
            if request is not None:  # the stream ended without the answer: the engine is stopping
                raise Lost("the engine closed the answer stream")
            return
        body = await response.aread()
        answer = parse(body)
        if request is None and status >= 400:  # a notification refused: nobody waits, and stdio answers none
            logger.warning("the engine refused a notification (HTTP %s): %r", status, body[:200])
            return
        if request is not None and not answers(answer, request.message.get("id")):
            # An HTTP error that is no JSON-RPC answer (a request cut off as the engine stops is a
            # plain-text 500): the client still gets an answer, or it would wait forever.
            text = body.decode(errors="replace").strip()[:200]
            logger.warning("the engine answered HTTP %s without a JSON-RPC answer: %r", status, text)
            why = f"HTTP {status}{': ' + text if text else ''}"
            if 400 <= status < 500:  # refused before it ran (too large, say): not "may or may not have run"
                await self._error(request, -32600, f"mcpmanager's engine refused the request ({why})")
            else:
                await self._unanswered(request, why)
        elif body.strip():
            await self._to_client(body, answer)

    async def _replay(self) -> None:
        replay, original = self._replayed_initialize()
        await self._post(replay, original, Pending(replay, original))
        if self._initialized is not None:
            await self._post(self._initialized, json.loads(self._initialized))

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
                        raise lost_at(generation, f"the engine refused the event stream ({stream.status_code})")
                    async for data in _events(stream):
                        await self._to_client(data, parse(data))
            except httpx2.TransportError as exc:
                raise lost_at(generation, f"event stream: {type(exc).__name__}") from exc
            await anyio.sleep(RECONNECT_PAUSE)

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
        modern = version_of(message) if message is not None else None
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


def _header_value(value: str) -> str:
    """As the SDK encodes a name into a header (`encode_header_value`): verbatim when it is printable
    ASCII without edge spaces, else wrapped as `=?base64?…?=` so the endpoint recovers it exactly."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _B64_SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


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
