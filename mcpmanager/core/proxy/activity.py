"""A bounded record of the calls that went through the proxy: what was called, what it resolved to
and how, what was renamed, how long it took and how it ended. The GUI shows it live and offers
"make alias" on a resolved or failed name; per-tool counters survive the ring's turnover.

On a team gateway each call also names the person whose token made it (`caller`, put in the HTTP
request's scope by the endpoint's guard under `CALLER_KEY`), and each finished call is logged with
that name: the gateway's audit trail (`docs/deploy.md`).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mcpmanager.core.signals import Signal

Outcome = Literal["pending", "ok", "error", "refused", "unknown", "cancelled"]
DEFAULT_SIZE = 1000
CALLER_KEY = "mcpmanager.caller"  # a gateway token's name, in the HTTP request scope's state

logger = logging.getLogger(__name__)


def team_caller(request: Any) -> str | None:
    """The name of the team token an HTTP request carried (None: not a gateway, or not over HTTP)."""
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    caller = state.get(CALLER_KEY) if isinstance(state, dict) else None
    return caller if isinstance(caller, str) else None


@dataclass(frozen=True)
class CallRecord:
    id: int
    started: float  # wall-clock time
    called: str  # the tool name as the client sent it
    via: str  # "call_tool" or "direct"
    server: str | None = None
    tool: str | None = None  # the server's own name of the tool it resolved to
    exposed: str | None = None
    how: str | None = None  # exact, alias, namespaced, original, normalized, fuzzy
    renames: tuple[tuple[str, str], ...] = ()  # (passed, declared) argument names
    outcome: Outcome = "pending"
    detail: str | None = None  # the first line of an error or refusal
    # Asking before the call (`approval`): what was decided and by whom ("allowed once in the window",
    # "declined by <client>", "denied by policy", "not answered within 120 s (window)"…); None: not asked.
    approval: str | None = None
    duration: float | None = None  # seconds
    caller: str | None = None  # on a team gateway: whose token made the call

    @property
    def resolved(self) -> bool:
        """Whether the name or an argument needed repair (a candidate for "make alias")."""
        return self.how not in (None, "exact") or bool(self.renames)


@dataclass
class ToolStats:
    calls: int = 0
    errors: int = 0
    total_time: float = 0.0


@dataclass
class Activity:
    size: int = DEFAULT_SIZE
    _records: deque[CallRecord] = field(init=False)
    _index: dict[int, CallRecord] = field(default_factory=dict, init=False)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1), init=False)
    # A call began or moved on (resolved, finished).
    changed: Signal[CallRecord] = field(default_factory=lambda: Signal("activity"), init=False)
    stats: dict[str, ToolStats] = field(default_factory=dict, init=False)  # by `server:tool`

    def __post_init__(self) -> None:
        self._records = deque(maxlen=self.size)

    def records(self) -> list[CallRecord]:
        return list(self._records)

    def begin(self, called: str, via: str, caller: str | None = None, **known: Any) -> CallRecord:
        """A call's record, pending; `known`: what is already known of it (its server, tool...)."""
        record = CallRecord(next(self._ids), time.time(), called, via, caller=caller, **known)
        if len(self._records) == self._records.maxlen:
            self._index.pop(self._records[0].id, None)
        self._records.append(record)
        self._index[record.id] = record
        self.changed.emit(record)
        return record

    def cancelled(self, record: CallRecord, duration: float) -> None:
        """The call's task was cancelled (its client cancelled it, its session closed, the engine
        stopped): `record` is finished as cancelled, unless it had finished already."""
        if self._index.get(record.id, record).outcome == "pending":
            self.update(record, outcome="cancelled", duration=duration)

    def update(self, record: CallRecord, **changes: object) -> CallRecord:
        """Replace `record` by a copy with `changes`; a finished call also counts in the tool's stats."""
        current = self._index.get(record.id, record)
        updated = replace(current, **changes)  # type: ignore[arg-type]
        finished = current.outcome == "pending" and updated.outcome != "pending"  # counted once
        if updated.outcome != "pending" and updated.duration is None:
            updated = replace(updated, duration=time.time() - updated.started)
        if record.id in self._index:
            self._index[record.id] = updated
            position = next(i for i in range(len(self._records) - 1, -1, -1) if self._records[i].id == record.id)
            self._records[position] = updated
        if finished and updated.server and updated.tool:
            stats = self.stats.setdefault(f"{updated.server}:{updated.tool}", ToolStats())
            stats.calls += 1
            stats.errors += updated.outcome not in ("ok", "cancelled")  # (a cancelled call is no fault of the tool's)
            stats.total_time += updated.duration or 0.0
        if finished and updated.caller is not None:
            # Who, what and how it ended; not the error's text, which may echo a key or a user's data
            # (it stays in the record, for whoever may read the activity).
            what = f"{updated.server}:{updated.tool}" if updated.server else repr(updated.called)
            ms = (updated.duration or 0) * 1000
            logger.info("%s called %s: %s in %.0f ms", updated.caller, what, updated.outcome, ms)
        self.changed.emit(updated)
        return updated
