"""The multi-round tools and prompt as a handshake-era server serves them: it asks the client itself.

A handshake-era client has no `inputResponses`: a server asks it with requests of its own
(`elicitation/create`, `sampling/createMessage`, `roots/list`) while the call is open. So the same
round handlers (`conformance_rounds.py`) run here in a loop: each `InputRequiredResult` they would
have answered becomes that round's questions sent to the client, all of a round at once (the
requests are concurrent where the 2026-07-28 tool asks several at once), and the answers, under the
round's own keys, go back into the handler with its state until it answers for good. The state
never leaves the server, so it stays plaintext here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata

Ctx = ServerRequestContext[Any]
Final = TypeVar("Final", types.CallToolResult, types.GetPromptResult)
Step = Callable[[types.InputResponses, str | None], Awaitable[Final | types.InputRequiredResult]]

# The answer each question's method expects.
ANSWER_TYPE: dict[str, type[types.ElicitResult | types.CreateMessageResult | types.ListRootsResult]] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}
ROUNDS = 10  # a handler that keeps asking past this is a bug in the fixture, not a client's fault


async def ask_round(ctx: Ctx, requests: types.InputRequests) -> types.InputResponses:
    """Every question of one round sent to the client at once; the answers under their keys."""
    answers: types.InputResponses = {}
    # Server-to-client requests ride the POST stream of the request that caused them.
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)

    async def one(key: str, request: types.CreateMessageRequest | types.ListRootsRequest | types.ElicitRequest) -> None:
        answers[key] = await ctx.session.send_request(request, ANSWER_TYPE[request.method], metadata=metadata)

    async with anyio.create_task_group() as group:
        for key, request in requests.items():
            group.start_soon(one, key, request)
    return answers


async def asked_directly(ctx: Ctx, step: Step[Final]) -> Final:
    """Run `step` to its end, asking its questions as a handshake-era server does."""
    answers: types.InputResponses = {}
    state: str | None = None
    for _ in range(ROUNDS):
        outcome = await step(answers, state)
        if not isinstance(outcome, types.InputRequiredResult):
            return outcome
        answers = {**answers, **await ask_round(ctx, outcome.input_requests or {})}
        state = outcome.request_state
    raise RuntimeError(f"still asking after {ROUNDS} rounds")
