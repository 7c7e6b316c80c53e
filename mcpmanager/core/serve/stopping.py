"""An endpoint's stop, in steps, so that quitting the app or restarting the engine does not cut off
calls a moment from their answer. From `begin`, nothing new is taken (over HTTP a request gets 503,
`routes.Paths`); the requests in flight on servers get up to a grace to finish and be answered
(`drained`); then, from `close`, nothing at all is taken while the sessions end and the servers
stop (`engine.host`).

"Nothing new" is a POST carrying a JSON-RPC request. What a client sends about the work in flight
still goes through: its answer to a server's question (a 2026-07-28 client's comes as the request
again, with the answers: that goes through too), a cancellation, the end of its session.
"""

from __future__ import annotations

import json

import anyio
from starlette.types import Message, Receive, Scope

from mcpmanager.core.proxy.callers import Callers

GRACE = 1.0  # seconds the requests in flight get to finish once the engine stops
_POLL = 0.01  # seconds between looks: a stop's wait, so the calls' own path pays nothing for it
# Seconds nothing must run before the drain ends: a call's answer still crosses the session and its
# streams for a few loop turns after the call has left `Callers`.
_SETTLE = 0.05
_READ_LIMIT = 4 << 20  # bytes read to tell; a larger body goes on as it is (the endpoint answers 413)


class Stopping:
    begun = False  # nothing new is taken
    closed = False  # the sessions are ending: nothing at all is (there is no one left to hear it)

    def begin(self) -> None:
        self.begun = True

    def close(self) -> None:
        self.begun = self.closed = True


async def drained(callers: Callers, grace: float = GRACE) -> bool:
    """Whether every request in flight on a server ended (and nothing ran for a moment after, so
    its answer is out) within `grace` seconds."""
    with anyio.move_on_after(grace):
        idle_since: float | None = None
        while idle_since is None or anyio.current_time() - idle_since < _SETTLE:
            if callers.busy():
                idle_since = None
            elif idle_since is None:
                idle_since = anyio.current_time()
            await anyio.sleep(_POLL)
        return True
    return False


async def new_work(scope: Scope, receive: Receive) -> tuple[bool, Receive]:
    """Whether an HTTP request to a stopping endpoint would start new work (a POST carrying a
    JSON-RPC request), and the `receive` to hand it on with (the body read here, replayed)."""
    if scope.get("method") != "POST":
        return False, receive
    messages: list[Message] = []

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":  # (the client went away: the app sees it so)
            return False, replay
        size += len(message.get("body", b""))
        if size > _READ_LIMIT:
            return False, replay
        if not message.get("more_body", False):
            break
    return _requests_in(b"".join(m.get("body", b"") for m in messages)), replay


def _requests_in(body: bytes) -> bool:
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return False  # (answered as malformed by the endpoint, as ever)
    batch = parsed if isinstance(parsed, list) else [parsed]
    return any(isinstance(m, dict) and "method" in m and "id" in m and not _answering(m) for m in batch)


def _answering(request: dict[str, object]) -> bool:
    """A 2026-07-28 client's request sent again with its answers to the server's questions."""
    params = request.get("params")
    return isinstance(params, dict) and ("inputResponses" in params or "requestState" in params)
