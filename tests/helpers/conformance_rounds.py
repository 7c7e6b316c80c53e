"""The multi-round-trip tools and prompt of SEP-2322 (scenarios `input-required-result-*`).

Each is called with no arguments and answers an `InputRequiredResult` until the client's retry
carries every answer it asked for, keyed as it asked (`user_name`, `step1`, ...): a missing or
wrongly keyed answer is asked for again, not refused (the SEP's SHOULD). State that must survive a
round rides in `requestState`, which the fixture's `RequestStateBoundary` seals on the way out and
verifies on the way back (a tampered token is refused with -32602 before a handler sees it), so
the handlers here read and write plaintext JSON.

The questions are 2026-07-28 wire shapes; a handshake-era client is never asked this way (it has no
`inputResponses`), so these tools only make sense at that revision, like the scenarios that call them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from tests.helpers.conformance_tables import EMPTY_OBJECT, text, user_message

Ctx = ServerRequestContext[Any]
Answers = types.InputResponses
Outcome = types.CallToolResult | types.InputRequiredResult
RoundHandler = Callable[[Ctx, Answers, str | None], Awaitable[Outcome]]


def elicit(message: str, **fields: str) -> types.ElicitRequest:
    """A form elicitation asking for `fields` (name=JSON type), all required."""
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in fields.items()}, "required": list(fields)}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def sample(prompt: str, max_tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(text=prompt))
    params = types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    return types.CreateMessageRequest(params=params)


def ask(requests: types.InputRequests, state: dict[str, Any] | None = None) -> types.InputRequiredResult:
    return types.InputRequiredResult(
        input_requests=requests, request_state=json.dumps(state) if state is not None else None
    )


def field(answers: Answers, key: str, name: str) -> Any | None:
    """Field `name` of an accepted elicitation answered under `key`, or None."""
    answer = answers.get(key)
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept" or not answer.content:
        return None
    return answer.content.get(name)


def sampled(answers: Answers, key: str) -> str | None:
    answer = answers.get(key)
    if not isinstance(answer, types.CreateMessageResult) or not isinstance(answer.content, types.TextContent):
        return None
    return answer.content.text


def roots(answers: Answers, key: str) -> list[types.Root] | None:
    answer = answers.get(key)
    return answer.roots if isinstance(answer, types.ListRootsResult) else None


def state_of(raw: str | None) -> dict[str, Any]:
    """The plaintext state the boundary verified (it refuses anything not minted here)."""
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


NAME = elicit("What is your name?", name="string")
CONFIRM = elicit("Please confirm", ok="boolean")


async def _elicitation(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    name = field(answers, "user_name", "name")
    return ask({"user_name": NAME}) if name is None else text(f"Hello, {name}!")


async def _sampling(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    reply = sampled(answers, "sample_request")
    if reply is None:
        return ask({"sample_request": sample("What is the capital of France?", 100)})
    return text(f"Sampling result: {reply}")


async def _list_roots(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    found = roots(answers, "roots_request")
    return ask({"roots_request": types.ListRootsRequest()}) if found is None else text(f"Found {len(found)} root(s)")


async def _request_state(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    if state_of(state).get("kind") == "request-state" and field(answers, "confirm", "ok") is True:
        return text("state-ok: requestState validated")
    return ask({"confirm": CONFIRM}, {"kind": "request-state"})


async def _multiple_inputs(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    name, greeting = field(answers, "user_name", "name"), sampled(answers, "greeting")
    found = roots(answers, "client_roots")
    if state_of(state).get("kind") == "multiple-inputs" and None not in (name, greeting, found):
        assert found is not None
        return text(f"Name: {name}; Greeting: {greeting}; Roots: {len(found)}")
    requests: types.InputRequests = {
        "user_name": NAME,
        "greeting": sample("Generate a greeting", 50),
        "client_roots": types.ListRootsRequest(),
    }
    return ask(requests, {"kind": "multiple-inputs"})


async def _multi_round(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    round_ = state_of(state)
    if round_.get("round") == 1 and (name := field(answers, "step1", "name")) is not None:
        step2 = elicit("Step 2: What is your favorite color?", color="string")
        return ask({"step2": step2}, {"round": 2, "name": name})
    if round_.get("round") == 2 and (color := field(answers, "step2", "color")) is not None:
        return text(f"Multi-round complete for {round_.get('name')} who likes {color}")
    return ask({"step1": elicit("Step 1: What is your name?", name="string")}, {"round": 1})


async def _tampered_state(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    # A token altered by the client never reaches here: the boundary answers -32602 first.
    if state_of(state).get("kind") == "tamper-test" and "confirm" in answers:
        return text("integrity-ok: state verified")
    return ask({"confirm": CONFIRM}, {"kind": "tamper-test"})


async def _capabilities(ctx: Ctx, answers: Answers, state: str | None) -> Outcome:
    if answers:
        return text(f"capabilities-ok: received {','.join(sorted(answers))}")
    declared = ctx.session.client_capabilities or types.ClientCapabilities()
    requests: types.InputRequests = {}
    if declared.elicitation is not None:  # only what the client said it can answer
        requests["elicit_input"] = elicit("Elicitation input", value="string")
    if declared.sampling is not None:
        requests["sample_input"] = sample("Sample request", 50)
    return ask(requests, {"kind": "capabilities-test"}) if requests else text("No supported capabilities declared")


# name -> (description, handler); every one takes no arguments.
ROUND_TOOLS: dict[str, tuple[str, RoundHandler]] = {
    "test_input_required_result_elicitation": ("Asks the user's name by InputRequiredResult", _elicitation),
    "test_input_required_result_sampling": ("Asks the client's LLM (sampling) by InputRequiredResult", _sampling),
    "test_input_required_result_list_roots": ("Asks the client's roots by InputRequiredResult", _list_roots),
    "test_input_required_result_request_state": ("Asks a confirmation, carrying requestState", _request_state),
    "test_input_required_result_multiple_inputs": ("Asks three questions at once", _multiple_inputs),
    "test_input_required_result_multi_round": ("Asks two questions in two rounds", _multi_round),
    "test_input_required_result_tampered_state": ("Refuses a requestState it did not mint", _tampered_state),
    "test_input_required_result_capabilities": ("Asks only what the client declared it can answer", _capabilities),
}


def round_tools() -> list[types.Tool]:
    return [types.Tool(name=n, description=d, input_schema=EMPTY_OBJECT) for n, (d, _) in ROUND_TOOLS.items()]


ROUND_PROMPT = types.Prompt(
    name="test_input_required_result_prompt", description="A prompt that first asks the user for its context"
)


def round_prompt(answers: Answers) -> types.GetPromptResult | types.InputRequiredResult:
    context = field(answers, "user_context", "context")
    if context is None:
        return ask({"user_context": elicit("What context should the prompt use?", context="string")})
    return types.GetPromptResult(messages=[user_message(types.TextContent(text=f"Prompt with context: {context}"))])
