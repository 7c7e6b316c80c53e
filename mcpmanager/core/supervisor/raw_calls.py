"""Requests to a stdio server as bytes, their answers taken off its stdout before the SDK sees them.

The SDK's client session costs several pydantic round trips, a task and a span per request; a proxy
that only hands a tool call on needs none of it. A `RawCalls` writes the request itself (under
the same lock as the session's writes, so two messages never interleave on the pipe) with an id
of its own (an integer from 2**30 on: the session counts its own from 1, and a server that takes
only integers, even 32-bit ones, takes these), and the stdout reader gives it every parsed message
first: an answer to one of its ids is delivered here as the dict the server wrote, and everything
else goes on to the session as before.

An answer that follows a message for the session (a log message, whose handler the session runs
as a task of its own) is handed to its waiter one loop turn later, so that message is handled while
the call still counts as in flight and reaches the call's client, as on the session's own path.

A request given up (cancelled, or past its time) is cancelled at the server with
`notifications/cancelled`, as the session does for its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic_core

FIRST_ID = 1 << 30
Write = Callable[[bytes], Awaitable[None]]


class RawClosed(Exception):
    """The server's output ended (or the lane was closed) before it answered."""


class RawCalls:
    def __init__(self, write: Write) -> None:
        self._write = write
        self._serial = itertools.count(FIRST_ID)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.closed = False

    def claims(self, message: object, after_session: bool = True) -> bool:
        """Whether `message` (a parsed line of the server's output) answers one of our requests; if so
        it is delivered to its waiter and the session must not see it. `after_session`: the session
        was handed a message since the last answer (its handler may not have run yet)."""
        if type(message) is not dict or "method" in message:
            return False
        request_id = message.get("id")
        if type(request_id) is not int or request_id < FIRST_ID:
            return False
        waiter = self._pending.pop(request_id, None)
        if waiter is not None and after_session:
            waiter.get_loop().call_soon(_settle, waiter, message)
        elif waiter is not None:
            _settle(waiter, message)
        return True  # one of ours, answered late (given up): dropped, as the session drops its own

    async def request(self, message: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """The server's answer to one request (`message`: its method and params; the id is set here):
        its response message as it wrote it (a `result` or an `error`). Raises `TimeoutError` after
        `timeout` seconds, `RawClosed` if the server's output ends first; either way, and on
        cancellation, the server is told to stop."""
        if self.closed:
            raise RawClosed
        request_id = next(self._serial)
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = waiter
        message = {"jsonrpc": "2.0", "id": request_id, **message}
        try:
            await self._write(pydantic_core.to_json(message) + b"\n")
            async with asyncio.timeout(timeout):
                return await waiter
        except BaseException as exc:
            if self._pending.pop(request_id, None) is not None and not isinstance(exc, RawClosed):
                reason = "timed out" if isinstance(exc, TimeoutError) else "cancelled by the client"
                await asyncio.shield(self._cancel(request_id, reason))
            raise

    async def _cancel(self, request_id: int, reason: str) -> None:
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        with contextlib.suppress(Exception):  # a gone server needs no telling
            await self._write(pydantic_core.to_json(cancel) + b"\n")

    def close(self) -> None:
        """The server's output ended: every waiting request fails with `RawClosed`."""
        self.closed = True
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            if not waiter.done():
                waiter.set_exception(RawClosed())


def _settle(waiter: asyncio.Future[dict[str, Any]], message: dict[str, Any]) -> None:
    if not waiter.done():  # (given up meanwhile)
        waiter.set_result(message)
