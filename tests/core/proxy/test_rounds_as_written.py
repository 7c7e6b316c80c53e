"""A 2026-07-28 server's round through `Rounds` as the server wrote it, with fake client sessions:
its questions reach a 2026-07-28 client at once under its keys, its requestState comes back to it
untouched, configured roots are answered without asking, an undeclared capability is refused with
-32021, a state mcpmanager does not hold is -32602, and the caller's capabilities are what each send
tells the server (`envelope.calling`)."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy import rounds as rounds_module
from mcpmanager.core.proxy.asking import ClientAsks
from mcpmanager.core.proxy.callers import Caller, Callers, Question
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.rounds import PARK_PREFIX, Rounds
from mcpmanager.core.supervisor import envelope
from tests.core.proxy.test_rounds import LEGACY, MODERN, FakeSession, ctx, ignore_log, params

FORMS = types.ClientCapabilities(elicitation=types.ElicitationCapability(form=types.FormElicitationCapability()))
ANSWER = types.ElicitResult(action="accept", content={"value": "x"})


def form(message: str) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema={}))


class ModernServer:
    """A 2026-07-28 server's tool that asks `questions` in one round, then answers with what it got;
    it records what each send was told the client can do."""

    def __init__(self, questions: types.InputRequests) -> None:
        self.questions = questions
        self.got: list[tuple[types.InputResponses | None, str | None]] = []
        self.told: list[types.ClientCapabilities | None] = []

    async def send(self, caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
        self.told.append(envelope._CALLING.get())
        self.got.append((answers, state))
        if answers is None:
            return types.InputRequiredResult(input_requests=self.questions, request_state="the server's own state")
        return types.CallToolResult(content=[types.TextContent(text="done")])


def setup(configured: list[str] | None = None) -> Rounds:
    callers = Callers(Connections())
    return Rounds(callers, ClientAsks(callers, lambda: [], lambda server: configured, ignore_log))


async def test_a_rounds_questions_reach_a_modern_client_at_once_under_the_servers_keys() -> None:
    rounds = setup()
    server = ModernServer({"user_name": form("name?"), "favourite_colour": form("colour?")})
    session = FakeSession(MODERN, FORMS)
    first = await rounds.run("srv", ctx(session), params(), server.send, "tools/call")
    assert isinstance(first, types.InputRequiredResult)
    assert set(first.input_requests or {}) == {"user_name", "favourite_colour"}
    assert first.request_state is not None and first.request_state.startswith(PARK_PREFIX)
    responses: types.InputResponses = {"user_name": ANSWER, "favourite_colour": ANSWER}
    final = await rounds.resume(ctx(session, 2), params(first.request_state, responses), "tools/call")
    assert isinstance(final, types.CallToolResult)
    assert server.got[1] == (responses, "the server's own state")  # its keys and its state, untouched
    assert server.told == [FORMS, FORMS]  # each send told the server the caller's capabilities


async def test_a_handshake_era_client_is_asked_each_question_of_a_round() -> None:
    rounds = setup()
    server = ModernServer({"a": form("a?"), "b": form("b?")})

    class Forms(FakeSession):
        async def send_request(self, request: Any, result_type: Any, metadata: Any = None) -> Any:
            self.asked.append((request.params.message, None))
            return ANSWER

    session = Forms(LEGACY, FORMS)
    result = await rounds.run("srv", ctx(session), params(), server.send, "tools/call")
    assert isinstance(result, types.CallToolResult)
    assert session.asked == [("a?", None), ("b?", None)]
    assert server.got[1] == ({"a": ANSWER, "b": ANSWER}, "the server's own state")


async def test_configured_roots_are_answered_here_and_only_the_rest_reaches_the_client() -> None:
    rounds = setup(configured=["file:///srv/project"])
    server = ModernServer({"where": types.ListRootsRequest(), "who": form("who?")})
    session = FakeSession(MODERN, FORMS)
    first = await rounds.run("srv", ctx(session), params(), server.send, "tools/call")
    assert isinstance(first, types.InputRequiredResult) and set(first.input_requests or {}) == {"who"}
    await rounds.resume(ctx(session, 2), params(first.request_state, {"who": ANSWER}), "tools/call")
    answers, _state = server.got[1]
    assert answers is not None and answers["who"] == ANSWER
    where = answers["where"]
    assert isinstance(where, types.ListRootsResult) and [str(r.uri) for r in where.roots] == ["file:///srv/project"]


async def test_a_question_the_client_did_not_declare_is_refused_with_32021() -> None:
    rounds = setup()
    question = types.CreateMessageRequest(params=types.CreateMessageRequestParams(messages=[], max_tokens=1))
    server = ModernServer({"s": question})
    with pytest.raises(MCPError) as refused:
        await rounds.run("srv", ctx(FakeSession(LEGACY, FORMS)), params(), server.send, "tools/call")
    assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY


@pytest.mark.parametrize("state", ["made-up", PARK_PREFIX + "never-issued"])
async def test_a_request_state_mcpmanager_does_not_hold_is_invalid_params(state: str) -> None:
    rounds = setup()
    server = ModernServer({})
    with pytest.raises(MCPError) as refused:
        await rounds.run("srv", ctx(FakeSession(MODERN, FORMS)), params(state, {}), server.send, "tools/call")
    assert refused.value.error.code == types.INVALID_PARAMS
    assert server.got == []  # nothing reached the server


async def test_mcpmanagers_own_questions_are_numbered_beside_a_servers_keys() -> None:
    """Questions with no key (mcpmanager's, a handshake-era server's) parked with a server's `q0`:
    every question keeps a key of its own, the server's as it wrote it."""
    rounds = setup()
    session = FakeSession(MODERN, FORMS)
    caller = rounds.callers.enter("srv", ctx(session), parkable=True)
    loop = asyncio.get_running_loop()
    task = loop.create_task(asyncio.Event().wait())
    futures = [loop.create_future() for _ in range(3)]
    gathered: list[Question] = [(None, form("ours?"), futures[0]), ("q0", form("server's?"), futures[1])]
    gathered.append((None, form("another?"), futures[2]))
    parked = rounds._park(rounds_module._Parked(caller, task, "tools/call"), gathered)
    messages = {key: request.params.message for key, request in (parked.input_requests or {}).items()}  # type: ignore[union-attr]
    assert messages == {"q0": "server's?", "q1": "ours?", "q2": "another?"}
    rounds.close()
