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

A retry may leave some of a round unanswered. Questions under mcpmanager's keys (a handshake-era
server's, mcpmanager's own) are asked again, in a new round of just those (and whatever the given
answers bring on) under the same keys; a 2026-07-28 server's round is its own, so it gets the
answers as they came and asks again itself if it wants. An answer under a key the round did not
ask is ignored: it reaches no server, and the retry goes on as if it were not there.

A parked request whose client never comes back is released after `PARK_EXPIRY`: the server is
told the client did not answer. (A 2026-07-28 client leaves no connection to watch for that: each
of its requests is one of its own.) While parked, it still counts as its client's request in flight
on its server (`callers`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable, Coroutine, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy.asking import UNANSWERED, Answer, ClientAsks
from mcpmanager.core.proxy.callers import Caller, Callers, Question
from mcpmanager.core.supervisor.envelope import calling

logger = logging.getLogger(__name__)

PARK_PREFIX = "mcpmanager-park:"
PARK_EXPIRY = 600.0  # seconds: a person may take a while to answer an elicitation
ROUND_QUIET = 0.01  # seconds without a new question before a handshake-era server's round goes out
MAX_ROUNDS = 10  # a server that keeps asking must not loop forever (the SDK's own cap)

R = TypeVar("R")
Outcome = Any  # R | InputRequiredResult
_Asked = tuple[types.InputRequest, "asyncio.Future[Answer]"]  # a question out with the client; its answer's way
# Sends the request downstream for `caller`, with answers and state for the server (or None).
Send = Callable[[Caller, types.InputResponses | None, str | None], Coroutine[Any, Any, Any]]


@dataclass(eq=False)
class _Parked(Generic[R]):
    caller: Caller
    task: asyncio.Task[Any]
    kind: str  # the request it answers (tools/call, prompts/get, resources/read): a retry must match
    # The round out with the client, by key: each question and where its answer goes.
    pending: dict[str, _Asked] = field(default_factory=dict)
    owned: set[str] = field(default_factory=set)  # the keys a 2026-07-28 server gave (its round)
    # Our keys for questions without one: never a number used before in this request, so a key
    # names one question across its rounds.
    numbers: Iterator[int] = field(default_factory=itertools.count)
    expiry: asyncio.TimerHandle | None = None

    def answer(self, responses: types.InputResponses) -> dict[str, _Asked]:
        """Deliver the retry's answers; what it left unanswered: a server's own question is left out of
        what its server gets (it asks again if it wants to), ours is returned, to ask again."""
        missing = {}
        for key, (request, future) in self.pending.items():
            if future.done():
                continue
            if key in responses:
                future.set_result(responses[key])
            elif key in self.owned:
                future.set_result(UNANSWERED)
            else:
                missing[key] = (request, future)
        self.pending = {}
        return missing


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
        """Go on with the parked request this retry names, its answers delivered to the server; what it
        left unanswered of a round of ours goes back to the client as a round of its own."""
        state = params.request_state or ""
        parked = self._parked.get(state)
        if parked is None or parked.kind != kind:
            raise stale_state()
        # An answer under a key this round did not ask is ignored (the spec's SHOULD for what a
        # server does not recognise): it answers nothing, so it reaches no server.
        responses = {key: value for key, value in (params.input_responses or {}).items() if key in parked.pending}
        del self._parked[state]
        if parked.expiry is not None:
            parked.expiry.cancel()
        parked.caller.ctx = ctx  # the retry is the request to reach from now on (progress, the next question)
        parked.caller.parked = False
        missing = parked.answer(responses)
        return await self._wait(parked, missing)

    async def _wait(self, parked: _Parked[Any], missing: dict[str, _Asked] | None = None) -> Outcome:
        """Until the request ends or asks the client something: then park it with a round of those
        questions (and of `missing`, questions of the last round the client did not answer)."""
        questions = parked.caller.questions
        assert questions is not None
        gathered: list[Question] = []
        try:
            # Missing answers are asked again at once, with whatever the answers just given bring on.
            if missing or await _next_question(parked.task, questions, gathered):
                await _settle(questions, gathered)
        except asyncio.CancelledError:  # the client gave up on its request: so do we
            parked.pending.update(missing or {})
            _refuse(_listed(gathered), "gave up on its request")
            _release(parked, "gave up on its request")
            raise
        if not gathered and not missing:
            return parked.task.result()
        if parked.task.done():  # it ended without these answers: nothing is left to ask
            _refuse({**(missing or {}), **_listed(gathered)}, "was not asked: its request had ended")
            return parked.task.result()
        return self._park(parked, gathered, missing)

    def _park(
        self, parked: _Parked[Any], gathered: list[Question], missing: dict[str, _Asked] | None = None
    ) -> types.InputRequiredResult:
        token = PARK_PREFIX + secrets.token_urlsafe(18)
        parked.pending = dict(missing or {})  # asked again under the keys the client saw them by
        parked.owned = set()
        unkeyed: list[tuple[bool, types.InputRequest, asyncio.Future[Answer]]] = []
        for key, request, future in gathered:  # a 2026-07-28 server's keys as it wrote them
            if key is None or key in parked.pending:
                unkeyed.append((key is not None, request, future))
            else:
                parked.pending[key] = (request, future)
                parked.owned.add(key)
        numbered = (f"q{n}" for n in parked.numbers if f"q{n}" not in parked.pending)  # ours: q0, q1...
        for owned, request, future in unkeyed:
            key = next(numbered)
            parked.pending[key] = (request, future)
            if owned:  # (a server's key that one of ours already had: its question all the same)
                parked.owned.add(key)
        self._parked[token] = parked
        parked.caller.parked = True
        parked.expiry = asyncio.get_running_loop().call_later(PARK_EXPIRY, self._expire, token)
        requests: types.InputRequests = {key: request for key, (request, _future) in parked.pending.items()}
        return types.InputRequiredResult(input_requests=requests, request_state=token)

    def _expire(self, token: str) -> None:
        parked = self._parked.pop(token, None)
        if parked is not None:
            _release(parked, f"did not answer within {PARK_EXPIRY:g} s")

    def close(self) -> None:
        """Release every parked request (the endpoint is going away)."""
        for token in list(self._parked):
            _release(self._parked.pop(token), "went away")


async def _next_question(task: asyncio.Task[Any], questions: asyncio.Queue[Question], into: list[Question]) -> bool:
    """Until the request ends (False) or asks something (True: the question put `into` the list)."""
    asked = asyncio.ensure_future(questions.get())
    try:
        await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not asked.done():
            asked.cancel()
    if not asked.done() or asked.cancelled():
        return False
    into.append(asked.result())
    return True


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
    _refuse(parked.pending, why)
    parked.pending = {}
    while caller.questions is not None and not caller.questions.empty():
        _key, _request, future = caller.questions.get_nowait()
        if not future.done():
            future.set_result(refusal)
    parked.task.cancel()
    parked.task.add_done_callback(_consume)


def _listed(gathered: list[Question]) -> dict[str, _Asked]:
    """Gathered questions by their place (for refusing them all: their keys do not matter then)."""
    return {str(n): (request, future) for n, (_key, request, future) in enumerate(gathered)}


def _refuse(asked: dict[str, _Asked], why: str) -> None:
    refusal = _no_answer(why)
    for _request, future in asked.values():
        if not future.done():
            future.set_result(refusal)


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
