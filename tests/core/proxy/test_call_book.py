"""The call book (`proxy/call_book`), the one owner of a call's bookkeeping, with fake client
sessions: the count, the record from begin to finish (now, or a loop turn after the answer), a
cancelled call, the call in flight on its server, the text of a call that raised, and which
finished calls teach. Also that nothing else in the package keeps a call's books."""

from __future__ import annotations

import ast
import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import mcp_types as types
import pytest
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

import mcpmanager.core.proxy as proxy_package
from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.proxy.activity import CALLER_KEY, Activity, CallRecord
from mcpmanager.core.proxy.asking import ClientAsks
from mcpmanager.core.proxy.call_book import CallBook
from mcpmanager.core.proxy.callers import Caller, Callers
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.learned import LearnedStore
from mcpmanager.core.proxy.learning import Learning
from mcpmanager.core.proxy.rounds import Rounds

TOOL = CatalogueTool("shop", "refund", "refund", {"name": "refund", "inputSchema": {"type": "object"}})
LEGACY = "2025-11-25"


@dataclass
class FakeSession:
    protocol_version: str = "2026-07-28"  # a modern client: learning keys it by its name, no connection needed
    client_capabilities: types.ClientCapabilities = field(default_factory=types.ClientCapabilities)
    client_params: None = None


@dataclass
class FakeRequest:
    scope: dict[str, Any]


@dataclass
class FakeCtx:
    session: FakeSession = field(default_factory=FakeSession)
    request: FakeRequest | None = None
    request_id: int = 1
    meta: dict[str, Any] | None = None


def ctx(session: FakeSession | None = None, caller: str | None = None) -> ServerRequestContext[Any, Any]:
    request = FakeRequest({"state": {CALLER_KEY: caller}}) if caller is not None else None
    return cast(ServerRequestContext[Any, Any], FakeCtx(session or FakeSession(), request))


async def ignore_log(server: str, message: types.LoggingMessageNotificationParams) -> None:
    return None


class Setup:
    def __init__(self) -> None:
        self.activity = Activity()
        self.learning = Learning(LearnedStore())
        self.callers = Callers(Connections())
        self.rounds = Rounds(self.callers, ClientAsks(self.callers, lambda: [], lambda server: None, ignore_log))
        self.book = CallBook(self.activity, self.learning, self.callers.connections, self.rounds)

    def record(self) -> CallRecord:
        return self.activity.records()[-1]


def error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def test_a_call_is_counted_begun_updated_and_finished_with_its_failures_first_line() -> None:
    setup = Setup()
    setup.book.received()
    setup.book.received()
    assert setup.book.calls == 2
    call = setup.book.begin(ctx(caller="ana"), "Refund", "call_tool")
    assert setup.record().outcome == "pending" and setup.record().caller == "ana" and setup.record().via == "call_tool"
    setup.book.update(call, server="shop", tool="refund", exposed="refund", how="normalized")
    setup.book.finish(call, "error", error("  \nno such order\nsecond line"), TOOL.key)
    record = setup.record()
    assert (record.outcome, record.detail, record.how) == ("error", "no such order", "normalized")
    assert record.duration is not None and record.duration >= 0
    assert setup.activity.stats["shop:refund"].errors == 1


def test_a_lane_answer_as_sent_finishes_its_record_a_loop_turn_later() -> None:
    async def run() -> None:
        setup = Setup()
        call = setup.book.begin(ctx(), "refund", "direct", server="shop", tool="refund")
        answer = {"content": [{"type": "text", "text": "refused by the bank"}], "isError": True}
        setup.book.finish(call, "error", answer, TOOL.key, soon=True)
        assert setup.record().outcome == "pending"  # the answer goes out first
        await asyncio.sleep(0)
        record = setup.record()
        assert (record.outcome, record.detail) == ("error", "refused by the bank")

    asyncio.run(run())


def test_a_fault_recording_a_lane_call_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> None:
        setup = Setup()
        call = setup.book.begin(ctx(), "refund", "direct")
        setup.book.finish(call, "error", {"content": 5, "isError": True}, soon=True)  # its first line cannot be read
        await asyncio.sleep(0)
        assert setup.record().outcome == "pending"

    with caplog.at_level(logging.ERROR):
        asyncio.run(run())
    assert any("recording call 1 failed" in r.getMessage() and r.exc_info for r in caplog.records)


def test_only_a_call_that_succeeded_on_a_shown_tool_teaches() -> None:
    setup = Setup()
    client = ctx()
    setup.book.discovered(client, "give the money back", [TOOL.key])
    setup.book.finish(setup.book.begin(client, "refund", "direct"), "error", error("no"), TOOL.key)
    setup.book.finish(setup.book.begin(client, "refund", "direct"), "refused", error("no"), TOOL.key)
    setup.book.finish(setup.book.begin(client, "refund", "direct"), "ok", types.CallToolResult(content=[]))  # no tool
    assert len(setup.learning.store) == 0
    setup.book.finish(setup.book.begin(client, "refund", "direct"), "ok", types.CallToolResult(content=[]), TOOL.key)
    assert [(e.query, e.tool) for e in setup.learning.store.entries()] == [("give the money back", "shop:refund")]


def test_a_name_suggested_after_a_query_then_called_teaches() -> None:
    setup = Setup()
    client = ctx()
    setup.book.discovered(client, "money back", ["shop:other"])
    setup.book.suggested(client, [TOOL.key])
    setup.book.finish(setup.book.begin(client, "refund", "direct"), "ok", types.CallToolResult(content=[]), TOOL.key)
    assert [e.tool for e in setup.learning.store.entries()] == ["shop:refund"]


def test_a_cancelled_call_is_recorded_cancelled_and_a_finished_one_stays_finished() -> None:
    async def run() -> None:
        setup = Setup()
        call = setup.book.begin(ctx(), "refund", "direct")

        async def cancelled() -> None:
            with setup.book.cancellable(call):
                await asyncio.sleep(10)

        task = asyncio.get_running_loop().create_task(cancelled())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert setup.record().outcome == "cancelled" and setup.record().duration is not None

        done = setup.book.begin(ctx(), "refund", "direct")

        async def finished_then_cancelled() -> None:
            with setup.book.cancellable(done):
                setup.book.finish(done, "ok", types.CallToolResult(content=[]))
                raise asyncio.CancelledError

        with pytest.raises(asyncio.CancelledError):
            await finished_then_cancelled()
        assert setup.record().outcome == "ok"

    asyncio.run(run())


def test_a_call_is_in_flight_on_its_server_while_it_runs() -> None:
    async def run() -> None:
        setup = Setup()
        call = setup.book.begin(ctx(FakeSession(LEGACY)), "refund", "direct")
        seen: list[Caller | str] = []

        async def send(caller: Caller, answers: types.InputResponses | None, state: str | None) -> Any:
            seen.append(setup.callers.find("shop"))
            return types.CallToolResult(content=[types.TextContent(text="done")])

        params = types.CallToolRequestParams(name="refund")
        result = await setup.book.in_flight(TOOL, call, params, send)
        assert isinstance(result, types.CallToolResult) and not result.is_error
        assert len(seen) == 1 and isinstance(seen[0], Caller) and seen[0].ctx is call.ctx
        assert setup.callers.on("shop") == []  # left once it ended

    asyncio.run(run())


def test_a_call_that_raised_is_answered_as_text_and_a_fault_of_ours_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        try:
            raise MCPError(types.INVALID_PARAMS, "the client declined")
        except Exception as exc:
            declined = CallBook.failed("Refund", TOOL, exc)
        assert not caplog.records  # the client's answer, not a fault
        try:
            raise KeyError("bug")
        except Exception as exc:
            bug = CallBook.failed("Refund", TOOL, exc)
    assert declined.is_error and declined.content == [
        types.TextContent(text="Calling 'Refund' on server 'shop' failed: the client declined")
    ]
    assert bug.is_error and bug.content == [types.TextContent(text="Calling 'Refund' on server 'shop' failed: 'bug'")]
    assert [r.getMessage() for r in caplog.records] == ["call to shop:refund failed"] and caplog.records[0].exc_info


def test_a_parked_answer_has_no_detail() -> None:
    setup = Setup()
    call = setup.book.begin(ctx(), "refund", "direct")
    setup.book.finish(call, "error", types.InputRequiredResult(input_requests={}, request_state="s"))
    assert setup.record().outcome == "error" and setup.record().detail is None


# What only the book may do with a call: the objects it keeps them in, and what of theirs it calls.
_KEPT = {"activity": {"begin", "update", "cancellable"}, "learning": {"called", "discovered", "suggested"}}


def _bookkeeping(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Where `tree` keeps a call's books: a record begun or changed, a lesson, a count, a round run."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            if node.attr in _KEPT.get(node.value.attr.lstrip("_"), ()):
                yield node.lineno, f"{node.value.attr}.{node.attr}"
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            if node.target.attr == "calls":
                yield node.lineno, "calls +="
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run":
            names = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
            if "tools/call" in names:
                yield node.lineno, "run(..., 'tools/call')"


def test_nothing_else_in_the_proxy_keeps_a_calls_books() -> None:
    """No module of `core/proxy` but the book begins or finishes a record, teaches from a call,
    counts one or runs one on its server (`Activity` and `Learning` themselves aside)."""
    found = []
    for path in sorted(Path(proxy_package.__file__).parent.glob("*.py")):
        if path.name not in ("call_book.py", "activity.py", "learning.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [f"{path.name}:{line} {what}" for line, what in _bookkeeping(tree)]
    assert found == []
