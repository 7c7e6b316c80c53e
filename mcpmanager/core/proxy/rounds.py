"""Requests that may need the client's input before they finish: tools/call, prompts/get, resources/read.

A server may ask its client something mid-request, in either protocol era, and the client may speak
either era too. `Rounds` runs each such request so that every pairing works:

* a handshake-era server asks with a request of its own (`asking`): a handshake-era client gets
  it directly; a 2026-07-28 client gets an `InputRequiredResult` while the server's request is
  *parked* (kept running), and the client's retry (`inputResponses` + our `requestState`) answers
  the server and the wait goes on;
* a 2026-07-28 server answers `InputRequiredResult` itself: mcpmanager answers what it answers for
  the client (roots from the config where set, a refusal where the client lacks the capability);
  the rest of the round goes to a 2026-07-28 client at once under the server's own keys (the
  client's `requestState` is ours; the server's waits here and goes back to it untouched), and a
  handshake-era client is asked each question in its era; then the server is retried with the
  answers.

Every request sent for a client tells a 2026-07-28 server that client's capabilities (`envelope`).

A parked request whose client never comes back is released after `PARK_EXPIRY`: the server is
told the client did not answer.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable, Coroutine
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy.asking import ClientAsks
from mcpmanager.core.proxy.callers import Caller, Callers, Question
from mcpmanager.core.supervisor.envelope import calling

logger = logging.getLogger(__name__)

PARK_PREFIX = "mcpmanager-park:"
PARK_EXPIRY = 600.0  # seconds: a person may take a while to answer an elicitation
ROUND_QUIET = 0.01  # seconds without a new question before a handshake-era server's round goes out
MAX_ROUNDS = 10  # a server that keeps asking must not loop forever (the SDK's own cap)

R = TypeVar("R")
Outcome = Any  # R | InputRequiredResult
# Sends the request downstream for `caller`, with answers and state for the server (or None).
Send = Callable[[Caller, types.InputResponses | None, str | None], Coroutine[Any, Any, Any]]


@dataclass(eq=False)
class _Parked(Generic[R]):
    caller: Caller
    task: asyncio.Task[Any]
    kind: str  # the request it answers (tools/call, prompts/get, resources/read): a retry must match
    pending: dict[str, asyncio.Future[types.InputResponse | types.ErrorData]] = field(default_factory=dict)
    expiry: asyncio.TimerHandle | None = None

    def answer(self, responses: types.InputResponses) -> None:
        for key, future in self.pending.items():
            if not future.done():
                future.set_result(responses.get(key) or _no_answer("sent no answer to it"))
        self.pending = {}


class Rounds:
    def __init__(self, callers: Callers, asks: ClientAsks) -> None:
        self.callers = callers
        self.asks = asks
        self._parked: dict[str, _Parked[Any]] = {}

    def parked(self) -> int:
        return len(self._parked)

    @staticmethod
    def is_retry(params: types.InputResponseRequestParams) -> bool:
        """Whether this request is a client's retry of a parked one: resume it before routing anything
        (the name or URI it repeats need not resolve again, nor the server be ready)."""
        return bool(params.request_state and params.request_state.startswith(PARK_PREFIX))

    async def run(
        self,
        server: str,
        ctx: ServerRequestContext[Any],
        params: types.InputResponseRequestParams,
        send: Send,
        kind: str,
    ) -> Outcome:
        if self.is_retry(params):
            return await self.resume(ctx, params, kind)
        if params.request_state is not None:  # every requestState a client holds is one of ours
            raise stale_state()
        caller = self.callers.enter(server, ctx, parkable=True)
        drive = self._drive(caller, send, params.input_responses)
        if caller.questions is None:  # a handshake-era client: asked directly, here
            try:
                return await drive
            finally:
                self.callers.leave(caller)
        task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(drive)
        task.add_done_callback(lambda _t: self.callers.leave(caller))
        return await self._wait(_Parked(caller, task, kind))

    async def _drive(self, caller: Caller, send: Send, responses: types.InputResponses | None) -> Outcome:
        """Send the request for `caller` (the server told the client's capabilities: `calling`),
        and answer each round of a 2026-07-28 server's questions, all of a round at once, then retry
        it with the answers and its own `requestState`, exactly as it wrote it."""
        with calling(caller.capabilities):
            result = await send(caller, responses, None)
        for _ in range(MAX_ROUNDS):
            if not isinstance(result, types.InputRequiredResult):
                return result
            answers = await self.asks.answer_round(caller, result.input_requests or {})
            with calling(caller.capabilities):
                result = await send(caller, answers, result.request_state)
        raise MCPError(types.INTERNAL_ERROR, f"Server '{caller.server}' still wanted input after {MAX_ROUNDS} rounds.")

    async def resume(
        self, ctx: ServerRequestContext[Any], params: types.InputResponseRequestParams, kind: str
    ) -> Outcome:
        """Go on with the parked request this retry names, its answers delivered to the server."""
        state = params.request_state or ""
        parked = self._parked.get(state)
        if parked is None or parked.kind != kind:
            raise stale_state()
        del self._parked[state]
        if parked.expiry is not None:
            parked.expiry.cancel()
        parked.caller.ctx = ctx  # the retry is the request to reach from now on (progress, the next question)
        parked.caller.parked = False
        parked.answer(params.input_responses or {})
        return await self._wait(parked)

    async def _wait(self, parked: _Parked[Any]) -> Outcome:
        questions = parked.caller.questions
        assert questions is not None
        asked = asyncio.ensure_future(questions.get())
        try:
            await asyncio.wait({parked.task, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the client gave up on its request: so do we
            asked.cancel()
            _release(parked, "gave up on its request")
            raise
        if not asked.done():
            asked.cancel()
            return parked.task.result()
        gathered = [asked.result()]
        await _settle(questions, gathered)
        return self._park(parked, gathered)

    def _park(self, parked: _Parked[Any], gathered: list[Question]) -> types.InputRequiredResult:
        token = PARK_PREFIX + secrets.token_urlsafe(18)
        requests: types.InputRequests = {}
        unkeyed: list[tuple[types.InputRequest, asyncio.Future[types.InputResponse | types.ErrorData]]] = []
        for key, request, future in gathered:  # a 2026-07-28 server's keys as it wrote them
            if key is None or key in requests:
                unkeyed.append((request, future))
            else:
                requests[key] = request
                parked.pending[key] = future
        numbered = (f"q{n}" for n in itertools.count() if f"q{n}" not in requests)  # ours: q0, q1...
        for request, future in unkeyed:
            key = next(numbered)
            requests[key] = request
            parked.pending[key] = future
        self._parked[token] = parked
        parked.caller.parked = True
        parked.expiry = asyncio.get_running_loop().call_later(PARK_EXPIRY, self._expire, token)
        return types.InputRequiredResult(input_requests=requests, request_state=token)

    def _expire(self, token: str) -> None:
        parked = self._parked.pop(token, None)
        if parked is not None:
            _release(parked, f"did not answer within {PARK_EXPIRY:g} s")

    def close(self) -> None:
        """Release every parked request (the endpoint is going away)."""
        for token in list(self._parked):
            _release(self._parked.pop(token), "went away")


async def _settle(questions: asyncio.Queue[Question], gathered: list[Question]) -> None:
    """Gather the questions asked together with the first, so they go out in one round.

    A handshake-era server's concurrent requests reach mcpmanager as separate messages, read as they
    come off its pipe, so they can be milliseconds apart: a round is complete once ROUND_QUIET
    passes with no new question. (Its cost, once per round, is nothing beside a person's answer; a
    question the server asks only after an answer is a round of its own anyway.)
    """
    while True:
        try:
            gathered.append(await asyncio.wait_for(questions.get(), ROUND_QUIET))
        except TimeoutError:
            return


def _release(parked: _Parked[Any], why: str) -> None:
    """Nobody will answer this request's questions any more: every question asked or still to come
    gets an error (so no server callback waits forever), and the server's request is cancelled."""
    caller = parked.caller
    caller.closed = True
    if parked.expiry is not None:
        parked.expiry.cancel()
    refusal = _no_answer(why)
    for future in parked.pending.values():
        if not future.done():
            future.set_result(refusal)
    parked.pending = {}
    while caller.questions is not None and not caller.questions.empty():
        _key, _request, future = caller.questions.get_nowait()
        if not future.done():
            future.set_result(refusal)
    parked.task.cancel()
    parked.task.add_done_callback(_consume)


def stale_state() -> MCPError:
    """A retry whose requestState mcpmanager did not issue, or no longer holds (expired, already
    used, for another kind of request, tampered with): invalid params (SEP-2322), a JSON-RPC error."""
    return MCPError(
        types.INVALID_PARAMS,
        "This requestState is not one mcpmanager holds (expired, already used or altered): send the request anew.",
    )


def _no_answer(why: str) -> types.ErrorData:
    return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The client {why}.")


def _consume(task: asyncio.Task[Any]) -> None:
    with suppress(asyncio.CancelledError, Exception):
        task.result()
