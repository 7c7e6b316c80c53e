"""The one owner of a tools/call's bookkeeping, whichever way the call goes: the full path
(`Router.call`), the fast lane (`fast_lane`) or the fast lane ahead of the session (`wire_lane`).

What a call leaves behind is kept here and nowhere else: the count of calls, its activity record
(begun, updated, finished or cancelled), its time in flight on its server (`Rounds.run`, whose
`Callers` let what the server asks or logs reach this client), the text a call that raised is
answered with, and what it teaches (`Learning`). A feature that touches every call is written once,
here, and both paths have it.

The lanes' path is the hot one, so nothing here adds a task, an await or a loop turn to a call: the
round in flight is the caller's to await (`in_flight` hands it over), and a lane's record may be
finished a turn after its answer left (`finish(soon=True)`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.proxy.activity import Activity, CallRecord, Outcome, team_caller
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.learning import Learning, session_of
from mcpmanager.core.proxy.rounds import Rounds, Send
from mcpmanager.core.tool_results import error_result, first_line

logger = logging.getLogger(__name__)

# A call's answer: typed on the full path, as sent (a dict) on the lanes.
Answer = types.CallToolResult | types.InputRequiredResult | Mapping[str, Any]


class Call:
    """One call being kept: its activity record, when it began (`perf_counter`) and its request.
    As a context (`CallBook.cancellable`) it finishes the record as cancelled if the call's task is
    cancelled within it: a class of its own, where a generator-made context would cost the lanes'
    path two objects and a few frames per call."""

    __slots__ = ("_activity", "ctx", "record", "started")

    def __init__(
        self, record: CallRecord, started: float, ctx: ServerRequestContext[Any, Any], activity: Activity
    ) -> None:
        self.record = record
        self.started = started
        self.ctx = ctx
        self._activity = activity

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None and issubclass(kind, asyncio.CancelledError):
            self._activity.cancelled(self.record, time.perf_counter() - self.started)


class CallBook:
    def __init__(self, activity: Activity, learning: Learning, connections: Connections, rounds: Rounds) -> None:
        self._activity = activity
        self._learning = learning
        self._connections = connections
        self._rounds = rounds
        self.calls = 0  # tools/call requests received, whichever way each went (meta-tools and retries too)

    def received(self) -> None:
        """A client's tools/call arrived (counted once, before anything is decided about it)."""
        self.calls += 1

    def begin(self, ctx: ServerRequestContext[Any, Any], called: str, via: str, **known: Any) -> Call:
        """A call's record, pending (`via`: "direct" or "call_tool"; `known`: what is known of it
        already, its server, tool, how its name resolved...), named after the team token its HTTP
        request carried."""
        started = time.perf_counter()
        activity = self._activity
        return Call(activity.begin(called, via, team_caller(ctx.request), **known), started, ctx, activity)

    def update(self, call: Call, **changes: object) -> None:
        """What became known of the call (where it resolved to, what was decided about asking)."""
        self._activity.update(call.record, **changes)

    @staticmethod
    def cancellable(call: Call) -> AbstractContextManager[None]:
        """Within it, the call's task cancelled (its client cancelled it, its session closed, the
        engine stopped) finishes its record as cancelled (unless it had finished already)."""
        return call

    def in_flight(
        self, tool: CatalogueTool, call: Call, params: types.CallToolRequestParams, send: Send
    ) -> Coroutine[Any, Any, Any]:
        """The call sent to `tool`'s server by `send`, counted in flight there while it runs, so what
        the server asks or logs reaches this client; a question asked of a 2026-07-28 client parks the
        call (`Rounds`). The caller awaits it (no frame of its own in between) and answers what it
        raises with `failed`."""
        return self._rounds.run(tool.server, call.ctx, params, send, "tools/call")

    @staticmethod
    def failed(called: str, tool: CatalogueTool, exc: Exception) -> types.CallToolResult:
        """What a call that raised is answered (in the `except` block): a question the client could
        not answer or a fault of mcpmanager's own (logged with its traceback), which must reach the
        model as text, not as -32603. (An error the spec defines is raised on instead: the callers
        check `protocol_errors.passes` first.)"""
        if not isinstance(exc, MCPError):
            logger.exception("call to %s failed", tool.key)
        return error_result(f"Calling '{called}' on server '{tool.server}' failed: {exc}")

    def finish(
        self, call: Call, outcome: Outcome, answer: Answer, taught: str | None = None, *, soon: bool = False
    ) -> None:
        """The call ended with `outcome` and `answer`: its record gets them (a failure's first line as
        its detail) and its duration; a call that succeeded on `taught` (a tool's key) teaches, if a
        recent query of its client's showed that tool. `soon`: the record is finished on the loop's
        next turn, once the answer is on its way (it need not wait for the activity's copy, stats and
        listeners)."""
        duration = time.perf_counter() - call.started
        if soon:
            asyncio.get_running_loop().call_soon(self._finish_soon, call.record, outcome, answer, duration)
        else:
            self._finish(call.record, outcome, answer, duration)
        if taught is not None and outcome == "ok":
            self._learning.called(session_of(call.ctx, self._connections), taught)

    def discovered(self, ctx: ServerRequestContext[Any, Any], query: object, keys: Sequence[str]) -> None:
        """A discover_tools call showed `keys` for `query`: calling one of them next may teach."""
        self._learning.discovered(self._session(ctx), query, keys)

    def suggested(self, ctx: ServerRequestContext[Any, Any], keys: Sequence[str]) -> None:
        """A miss was answered "did you mean" `keys`: calling one of them next may teach."""
        self._learning.suggested(self._session(ctx), keys)

    def _session(self, ctx: ServerRequestContext[Any, Any]) -> Hashable:
        return session_of(ctx, self._connections)

    def _finish(self, record: CallRecord, outcome: Outcome, answer: Answer, duration: float) -> None:
        detail = _first_line(answer) if outcome != "ok" else None
        self._activity.update(record, outcome=outcome, detail=detail, duration=duration)

    def _finish_soon(self, record: CallRecord, outcome: Outcome, answer: Answer, duration: float) -> None:
        try:  # (`_finish` written out: a frame less on the lanes' path)
            detail = _first_line(answer) if outcome != "ok" else None
            self._activity.update(record, outcome=outcome, detail=detail, duration=duration)
        except Exception:  # boundary: a callback's fault would reach only asyncio's handler
            logger.exception("recording call %s failed", record.id)


def _first_line(answer: Answer) -> str | None:
    if isinstance(answer, types.CallToolResult):
        return first_line(answer.model_dump(mode="json", by_alias=True, exclude_none=True))
    if isinstance(answer, types.InputRequiredResult):
        return None
    return first_line(answer)
