"""Requests that need the client's input, in every pairing of eras, with fake client sessions: which
client is asked (`Callers`), a 2026-07-28 client's parked request and its retry, a handshake-era
client asked directly (also for a modern server's InputRequiredResult), expiry and refusals."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

import mcp_types as types
import pytest
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.proxy import rounds as rounds_module
from mcpmanager.core.proxy.asking import ClientAsks
from mcpmanager.core.proxy.callers import Caller, Callers
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.rounds import PARK_PREFIX, Rounds

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SAMPLING = types.ClientCapabilities(sampling=types.SamplingCapability())
REPLY = types.CreateMessageResult(role="assistant", content=types.TextContent(text="42"), model="m")


@dataclass
class FakeSession:
    """What the proxy reads of a client's session: its era, capabilities, and a way to ask it."""

    protocol_version: str
    client_capabilities: types.ClientCapabilities = field(default_factory=lambda: SAMPLING)
    client_params: None = None
    asked: list[tuple[str, Any]] = field(default_factory=list)

    async def send_request(self, request: Any, result_type: Any, metadata: Any = None) -> Any:
        self.asked.append((request.method, metadata.related_request_id if metadata else None))
        return REPLY


@dataclass
class FakeCtx:
    session: FakeSession
    request_id: int = 1
    meta: dict[str, Any] | None = None


async def ignore_log(server: str, message: types.LoggingMessageNotificationParams) -> None:
    return None


def ctx(session: FakeSession, request_id: int = 1) -> ServerRequestContext[Any]:
    return cast(ServerRequestContext[Any], FakeCtx(session, request_id))


def sample_request() -> types.CreateMessageRequestParams:
    message = types.SamplingMessage(role="user", content=types.TextContent(text="6 x 7?"))
    return types.CreateMessageRequestParams(messages=[message], max_tokens=10)


def params(state: str | None = None, answers: types.InputResponses | None = None) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name="t", request_state=state, input_responses=answers)


class Setup:
    def __init__(self) -> None:
        self.callers = Callers(Connections())
        self.asks = ClientAsks(self.callers, lambda: [], lambda server: None, ignore_log)
        self.rounds = Rounds(self.callers, self.asks)

    def sampling_tool(self) -> Any:
        """A handshake-era server's tool that asks its client for a sample, then answers with it."""

        async def send(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
            answer = await self.asks.sample("srv", sample_request())
            if isinstance(answer, types.ErrorData):
                return types.CallToolResult(content=[types.TextContent(text=answer.message)], is_error=True)
            assert isinstance(answer.content, types.TextContent)
            return types.CallToolResult(content=[types.TextContent(text=f"got {answer.content.text}")])

        return send


async def test_a_modern_client_is_asked_through_input_required_and_its_retry_finishes_the_call() -> None:
    setup = Setup()
    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None and first.request_state.startswith(PARK_PREFIX)
    [(key, request)] = (first.input_requests or {}).items()
    assert isinstance(request, types.CreateMessageRequest) and setup.rounds.parked() == 1
    assert setup.callers.on("srv")  # the server's call is still in flight

    final = await setup.rounds.resume(ctx(session, 2), params(first.request_state, {key: REPLY}), "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "got 42"  # type: ignore[union-attr]
    assert setup.rounds.parked() == 0
    await asyncio.sleep(0)
    assert setup.callers.on("srv") == []
    with pytest.raises(MCPError, match="expired, already used or altered"):
        await setup.rounds.resume(ctx(session, 3), params(first.request_state, {key: REPLY}), "tools/call")


async def test_a_handshake_era_client_is_asked_directly_on_its_request() -> None:
    setup = Setup()
    session = FakeSession(LEGACY)
    result = await setup.rounds.run("srv", ctx(session, 7), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(result, types.CallToolResult) and result.content[0].text == "got 42"  # type: ignore[union-attr]
    assert session.asked == [("sampling/createMessage", 7)]  # related to its own request


async def test_a_modern_servers_input_required_is_answered_for_a_handshake_era_client() -> None:
    setup = Setup()
    session = FakeSession(LEGACY)
    rounds_seen: list[types.InputResponses | None] = []

    async def modern_server(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
        rounds_seen.append(answers)
        if answers is None:
            question = types.CreateMessageRequest(params=sample_request())
            return types.InputRequiredResult(input_requests={"s": question}, request_state="server-state")
        assert state == "server-state"
        return types.CallToolResult(content=[types.TextContent(text="done")])

    result = await setup.rounds.run("srv", ctx(session), params(), modern_server, "tools/call")
    assert isinstance(result, types.CallToolResult) and not result.is_error
    assert rounds_seen[1] is not None and rounds_seen[1]["s"] == REPLY
    assert session.asked == [("sampling/createMessage", 1)]


async def test_a_client_without_the_capability_is_not_asked_and_the_server_hears_why() -> None:
    setup = Setup()
    session = FakeSession(LEGACY, client_capabilities=types.ClientCapabilities())
    result = await setup.rounds.run("srv", ctx(session), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(result, types.CallToolResult) and result.is_error
    assert "did not declare sampling" in result.content[0].text  # type: ignore[union-attr]
    assert session.asked == []


async def test_nobody_or_several_clients_in_flight_are_refused() -> None:
    setup = Setup()
    nobody = await setup.asks.sample("srv", sample_request())
    assert isinstance(nobody, types.ErrorData) and "no client request is in flight" in nobody.message
    first, second = FakeSession(LEGACY), FakeSession(LEGACY)
    with setup.callers.working_for("srv", ctx(first)), setup.callers.working_for("srv", ctx(second)):
        several = await setup.asks.sample("srv", sample_request())
    assert isinstance(several, types.ErrorData) and "2 clients" in several.message
    assert first.asked == [] and second.asked == []
    with setup.callers.working_for("srv", ctx(first, 1)), setup.callers.working_for("srv", ctx(first, 2)):
        one = await setup.asks.sample("srv", sample_request())  # one client, two requests: its latest
    assert one == REPLY and first.asked == [("sampling/createMessage", 2)]


async def test_a_parked_call_whose_client_never_returns_is_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rounds_module, "PARK_EXPIRY", 0.05)
    setup = Setup()
    first = await setup.rounds.run("srv", ctx(FakeSession(MODERN)), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(first, types.InputRequiredResult) and setup.rounds.parked() == 1
    for _ in range(100):
        if not setup.callers.on("srv"):
            break
        await asyncio.sleep(0.01)
    assert setup.rounds.parked() == 0 and setup.callers.on("srv") == []  # the server got "did not answer"


async def test_roots_come_from_the_config_without_asking_anyone() -> None:
    callers = Callers(Connections())
    asks = ClientAsks(callers, lambda: [], lambda server: ["/srv/project", "file:///home/me/notes"], ignore_log)
    session = FakeSession(LEGACY, types.ClientCapabilities(roots=types.RootsCapability()))
    with callers.working_for("srv", ctx(session)):
        answer = await asks.roots("srv")
    assert isinstance(answer, types.ListRootsResult)
    assert [str(r.uri) for r in answer.roots] == ["file:///srv/project", "file:///home/me/notes"]
    assert session.asked == []


async def test_a_released_call_refuses_every_later_question_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server told "did not answer" that asks again must not wait forever (nor keep its caller)."""
    monkeypatch.setattr(rounds_module, "PARK_EXPIRY", 0.05)
    setup = Setup()
    answers: list[types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData] = []

    async def asks_twice(caller: Caller, responses: types.InputResponses | None, state: str | None) -> Any:
        answers.append(await setup.asks.sample("srv", sample_request()))
        answers.append(await setup.asks.sample("srv", sample_request()))  # e.g. a fallback question
        return types.CallToolResult(content=[])

    first = await setup.rounds.run("srv", ctx(FakeSession(MODERN)), params(), asks_twice, "tools/call")
    assert isinstance(first, types.InputRequiredResult)
    for _ in range(100):
        if len(answers) == 2 or not setup.callers.on("srv"):
            break
        await asyncio.sleep(0.01)
    assert setup.callers.on("srv") == [] and setup.rounds.parked() == 0
    assert all(isinstance(a, types.ErrorData) for a in answers), answers


async def test_a_retry_for_another_kind_of_request_is_refused() -> None:
    setup = Setup()
    first = await setup.rounds.run("srv", ctx(FakeSession(MODERN)), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(first, types.InputRequiredResult) and first.request_state
    retry = types.ReadResourceRequestParams(uri="x://y", request_state=first.request_state, input_responses={})
    with pytest.raises(MCPError, match="expired, already used or altered"):
        await setup.rounds.resume(ctx(FakeSession(MODERN), 2), retry, "resources/read")
    setup.rounds.close()
    assert setup.rounds.parked() == 0


async def test_roots_are_the_callers_or_an_error_never_another_clients() -> None:
    callers = Callers(Connections())
    asks = ClientAsks(callers, lambda: [], lambda server: None, ignore_log)
    with_roots = FakeSession(LEGACY, types.ClientCapabilities(roots=types.RootsCapability()))
    without = FakeSession(LEGACY, types.ClientCapabilities())
    with callers.working_for("srv", ctx(without)):
        lacking = await asks.roots("srv")
    assert isinstance(lacking, types.ErrorData) and "did not declare roots" in lacking.message
    with callers.working_for("srv", ctx(with_roots)), callers.working_for("srv", ctx(without)):
        several = await asks.roots("srv")
    assert isinstance(several, types.ErrorData) and "2 clients" in several.message
    assert with_roots.asked == []


async def test_a_handshake_era_servers_concurrent_questions_reach_a_modern_client_in_one_round() -> None:
    setup = Setup()

    async def three_at_once(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
        async def one(delay: float) -> None:
            await asyncio.sleep(delay)  # the server's requests come off its pipe as separate messages
            await setup.asks.sample("srv", sample_request())

        await asyncio.gather(one(0), one(0.003), one(0.006))
        return types.CallToolResult(content=[types.TextContent(text="all three")])

    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), three_at_once, "tools/call")
    assert isinstance(first, types.InputRequiredResult)
    assert len(first.input_requests or {}) == 3  # one round, not three
    answers: types.InputResponses = dict.fromkeys(first.input_requests or {}, REPLY)
    final = await setup.rounds.resume(ctx(session, 2), params(first.request_state, answers), "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "all three"  # type: ignore[union-attr]


async def test_a_question_the_parked_call_asks_after_its_round_went_out_is_asked_of_nobody_else() -> None:
    """Why a parked call still counts: a handshake-era server may ask for it again while it waits
    (here a second question, concurrent with the first, that comes after the first round went
    out). Asked while another client's request runs, it could be either's: nobody is asked."""
    setup = Setup()
    later = asyncio.Event()
    answers: list[types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData] = []

    async def asks_again_while_waiting(
        caller: Caller, responses: types.InputResponses | None, state: str | None
    ) -> Any:
        async def second() -> None:
            await later.wait()
            answers.append(await setup.asks.sample("srv", sample_request()))

        await asyncio.gather(setup.asks.sample("srv", sample_request()), second())
        return types.CallToolResult(content=[])

    parked_client = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(parked_client), params(), asks_again_while_waiting, "tools/call")
    assert isinstance(first, types.InputRequiredResult) and len(first.input_requests or {}) == 1
    other = FakeSession(LEGACY)
    with setup.callers.working_for("srv", ctx(other)):
        later.set()
        for _ in range(100):
            if answers:
                break
            await asyncio.sleep(0.01)
    assert len(answers) == 1 and isinstance(answers[0], types.ErrorData), answers
    assert "2 clients" in answers[0].message and other.asked == []
    setup.rounds.close()


async def test_a_retry_missing_answers_is_asked_them_again_with_what_the_given_ones_brought_on() -> None:
    setup = Setup()
    got: list[str] = []

    async def two_then_a_follow_up(caller: Caller, responses: types.InputResponses | None, state: str | None) -> Any:
        async def ask(then_more: bool) -> None:
            answer = await setup.asks.sample("srv", sample_request())
            got.append(type(answer).__name__)
            if then_more:  # the answer to this one brings on another question
                got.append(type(await setup.asks.sample("srv", sample_request())).__name__)

        await asyncio.gather(ask(True), ask(False))
        return types.CallToolResult(content=[types.TextContent(text="done")])

    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), two_then_a_follow_up, "tools/call")
    assert isinstance(first, types.InputRequiredResult)
    assert list(first.input_requests or {}) == ["q0", "q1"]
    again = await setup.rounds.resume(ctx(session, 2), params(first.request_state, {"q0": REPLY}), "tools/call")
    assert isinstance(again, types.InputRequiredResult) and again.request_state != first.request_state
    assert sorted(again.input_requests or {}) == ["q1", "q2"]  # the one left, and the follow-up, numbered anew
    answers: types.InputResponses = {"q1": REPLY, "q2": REPLY}
    final = await setup.rounds.resume(ctx(session, 3), params(again.request_state, answers), "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "done"  # type: ignore[union-attr]
    assert got == ["CreateMessageResult"] * 3


async def test_questions_left_unanswered_are_not_asked_again_once_the_request_has_ended() -> None:
    """A server that stops waiting for an answer (it finished without it): the retry gets the result."""
    setup = Setup()

    async def gives_up_on_the_second(caller: Caller, responses: types.InputResponses | None, state: str | None) -> Any:
        second = asyncio.ensure_future(setup.asks.sample("srv", sample_request()))
        await setup.asks.sample("srv", sample_request())
        second.cancel()
        return types.CallToolResult(content=[types.TextContent(text="enough")])

    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), gives_up_on_the_second, "tools/call")
    assert isinstance(first, types.InputRequiredResult) and list(first.input_requests or {}) == ["q0", "q1"]
    final = await setup.rounds.resume(ctx(session, 2), params(first.request_state, {"q0": REPLY}), "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "enough"  # type: ignore[union-attr]
    assert setup.rounds.parked() == 0


async def test_an_answer_to_a_key_never_asked_is_ignored_and_the_servers_round_goes_on_without_it() -> None:
    """A 2026-07-28 server's round: the server gets the answers it asked for, and nothing else."""
    setup = Setup()
    seen: list[types.InputResponses | None] = []

    async def modern_server(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
        seen.append(answers)
        if answers is None:
            question = types.CreateMessageRequest(params=sample_request())
            return types.InputRequiredResult(input_requests={"s": question}, request_state="server-state")
        return types.CallToolResult(content=[types.TextContent(text=f"answered {sorted(answers)}")])

    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), modern_server, "tools/call")
    assert isinstance(first, types.InputRequiredResult) and list(first.input_requests or {}) == ["s"]
    retry = params(first.request_state, {"s": REPLY, "q7": REPLY})
    final = await setup.rounds.resume(ctx(session, 2), retry, "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "answered ['s']"  # type: ignore[union-attr]
    assert seen == [None, {"s": REPLY}]  # "q7" reached no server
    assert setup.rounds.parked() == 0


async def test_a_retry_answering_only_keys_never_asked_is_asked_its_round_again() -> None:
    """A round of mcpmanager's keys: the unknown key answers nothing, so what was asked is asked again."""
    setup = Setup()
    session = FakeSession(MODERN)
    first = await setup.rounds.run("srv", ctx(session), params(), setup.sampling_tool(), "tools/call")
    assert isinstance(first, types.InputRequiredResult) and list(first.input_requests or {}) == ["q0"]
    again = await setup.rounds.resume(ctx(session, 2), params(first.request_state, {"q7": REPLY}), "tools/call")
    assert isinstance(again, types.InputRequiredResult) and again.request_state != first.request_state
    assert list(again.input_requests or {}) == ["q0"]  # the same question under its key, "q7" taken for nothing
    final = await setup.rounds.resume(ctx(session, 3), params(again.request_state, {"q0": REPLY}), "tools/call")
    assert isinstance(final, types.CallToolResult) and final.content[0].text == "got 42"  # type: ignore[union-attr]
