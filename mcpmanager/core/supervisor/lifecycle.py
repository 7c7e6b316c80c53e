"""The lifecycle of one downstream server, as pure decisions (sans-io).

`Lifecycle.handle(event)` moves the state machine and returns the commands the IO layer must
carry out (spawn, stop, schedule a retry). It never touches a process, a clock or a task, so every
transition — backoff doubling, the crash-loop verdict, the healthy reset — is tested as
event → command sequences (tests/core/supervisor/test_lifecycle.py).

    stopped → starting → ready
    ready → backoff → starting         (a crash: the reason says what happened, retry_in when)
    starting → backoff → starting      (a failed start counts as a crash)
    too many crashes in the window → failed (until the user restarts)
    a permanent failure (command not found) → failed at once
    starting → needs-sign-in           (a remote server wants the user to sign in: no retry until
                                        they have, then a start request)
    any → disabled / stopped on request
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

from mcpmanager.core.supervisor.state_line import state_line


class State(enum.Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    BACKOFF = "backoff"
    FAILED = "failed"
    DISABLED = "disabled"
    NEEDS_SIGN_IN = "needs-sign-in"

    def __repr__(self) -> str:
        return f"<State {self.value}>"

    @property
    def is_up(self) -> bool:
        return self is State.READY


@dataclass(frozen=True)
class Policy:
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    crash_limit: int = 5
    crash_window: float = 60.0
    healthy_after: float = 300.0


@dataclass(frozen=True)
class Status:
    """What a front end shows for a server: its state and why."""

    state: State
    reason: str = ""
    since: float = 0.0
    restarts: int = 0
    retry_in: float | None = None

    def describe(self) -> str:
        """`backoff: exited 3 (retry in 4 s)`: the state line without what only the server knows (its
        last exit, its log file: `Downstream.state_line`)."""
        return state_line(self.state.value, self.reason, self.retry_in)


# Events -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartRequested:
    now: float


@dataclass(frozen=True)
class StopRequested:
    now: float


@dataclass(frozen=True)
class DisableRequested:
    now: float


@dataclass(frozen=True)
class BecameReady:
    now: float


@dataclass(frozen=True)
class Crashed:
    """The process exited, the connection broke, or the start failed; `reason` says which."""

    now: float
    reason: str
    permanent: bool = False  # retrying cannot help (e.g. the command does not exist)
    sign_in: bool = False  # the server wants the user to sign in: no crash, and no retry until then


@dataclass(frozen=True)
class RetryDue:
    now: float


Event = StartRequested | StopRequested | DisableRequested | BecameReady | Crashed | RetryDue


# Commands -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spawn:
    pass


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class ScheduleRetry:
    delay: float


@dataclass(frozen=True)
class CancelRetry:
    pass


Command = Spawn | Shutdown | ScheduleRetry | CancelRetry


@dataclass
class Lifecycle:
    policy: Policy = field(default_factory=Policy)
    status: Status = field(default_factory=lambda: Status(State.STOPPED))
    _crashes: deque[float] = field(default_factory=deque)
    _ready_since: float | None = None
    _restarts: int = 0

    @property
    def state(self) -> State:
        return self.status.state

    def _set(self, state: State, now: float, reason: str = "", retry_in: float | None = None) -> None:
        self.status = Status(state, reason, now, self._restarts, retry_in)

    def handle(self, event: Event) -> list[Command]:
        state = self.state
        match event:
            case StartRequested(now):
                if state in (State.STARTING, State.READY):
                    return []
                self._crashes.clear()
                cancel: list[Command] = [CancelRetry()] if state is State.BACKOFF else []
                self._set(State.STARTING, now)
                return [*cancel, Spawn()]
            case StopRequested(now) | DisableRequested(now):
                target = State.DISABLED if isinstance(event, DisableRequested) else State.STOPPED
                commands: list[Command] = []
                if state is State.BACKOFF:
                    commands.append(CancelRetry())
                if state in (State.STARTING, State.READY):
                    commands.append(Shutdown())
                self._ready_since = None
                self._set(target, now)
                return commands
            case BecameReady(now):
                if state is not State.STARTING:
                    return []
                self._ready_since = now
                self._set(State.READY, now)
                return []
            case Crashed(now, reason, permanent, sign_in):
                if state not in (State.STARTING, State.READY):
                    return []
                if sign_in:
                    self._crashes.clear()
                    self._ready_since = None
                    self._set(State.NEEDS_SIGN_IN, now, reason)
                    return []
                return self._crashed(now, reason, permanent)
            case RetryDue(now):
                if state is not State.BACKOFF:
                    return []
                self._restarts += 1
                self._set(State.STARTING, now, "restarting")
                return [Spawn()]
        return []

    def _crashed(self, now: float, reason: str, permanent: bool) -> list[Command]:
        policy = self.policy
        # A long healthy run forgives earlier crashes: backoff starts again from the bottom.
        if self._ready_since is not None and now - self._ready_since >= policy.healthy_after:
            self._crashes.clear()
        self._ready_since = None
        self._crashes.append(now)
        while self._crashes and now - self._crashes[0] > policy.crash_window:
            self._crashes.popleft()
        if permanent:
            self._set(State.FAILED, now, reason)
            return []
        if len(self._crashes) >= policy.crash_limit:
            count, window = len(self._crashes), _seconds(policy.crash_window)
            self._set(State.FAILED, now, f"crash loop: {count} crashes in {window}; last: {reason}")
            return []
        delay = min(policy.backoff_initial * 2 ** (len(self._crashes) - 1), policy.backoff_max)
        self._set(State.BACKOFF, now, reason, retry_in=delay)
        return [ScheduleRetry(delay)]


def _seconds(value: float) -> str:
    return f"{value:g} s"
