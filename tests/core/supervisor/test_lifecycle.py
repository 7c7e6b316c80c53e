"""The supervisor's decisions as event → command sequences (no processes, no clock)."""

from __future__ import annotations

from mcpmanager.core.supervisor.lifecycle import (
    BecameReady,
    CancelRetry,
    Crashed,
    DisableRequested,
    Lifecycle,
    Policy,
    RetryDue,
    ScheduleRetry,
    Shutdown,
    Spawn,
    StartRequested,
    State,
    StopRequested,
)

POLICY = Policy(backoff_initial=1, backoff_max=8, crash_limit=5, crash_window=60, healthy_after=300)


def state_of(machine: Lifecycle) -> State:
    """`machine.state` read through a call: mypy keeps an assert's narrowing across `handle()`, which changes it."""
    return machine.state


def ready_machine(now: float = 0.0) -> Lifecycle:
    machine = Lifecycle(POLICY)
    assert machine.handle(StartRequested(now)) == [Spawn()]
    assert machine.handle(BecameReady(now + 1)) == []
    assert machine.state is State.READY
    return machine


def test_start_spawns_and_ready_is_ready() -> None:
    machine = Lifecycle(POLICY)
    assert machine.state is State.STOPPED
    assert machine.handle(StartRequested(0)) == [Spawn()]
    assert state_of(machine) is State.STARTING
    assert machine.handle(StartRequested(0.5)) == []  # already starting: no second process
    machine.handle(BecameReady(1))
    assert machine.status.state is State.READY


def test_crash_backs_off_doubling_to_the_cap() -> None:
    machine = ready_machine()
    delays = []
    now = 10.0
    for _ in range(4):
        commands = machine.handle(Crashed(now, "exited 3 — fatal: boom"))
        assert machine.state is State.BACKOFF
        assert machine.status.reason == "exited 3 — fatal: boom"
        [retry] = commands
        assert isinstance(retry, ScheduleRetry)
        delays.append(retry.delay)
        assert machine.handle(RetryDue(now + retry.delay)) == [Spawn()]
        assert state_of(machine) is State.STARTING
        now += 1
    assert delays == [1, 2, 4, 8]
    assert machine.status.restarts == 4


def test_backoff_is_capped() -> None:
    machine = Lifecycle(Policy(backoff_initial=1, backoff_max=3, crash_limit=10, crash_window=60))
    machine.handle(StartRequested(0))
    delays = []
    for i in range(5):
        [retry] = machine.handle(Crashed(float(i), "x"))
        assert isinstance(retry, ScheduleRetry)
        delays.append(retry.delay)
        machine.handle(RetryDue(float(i)))
    assert delays == [1, 2, 3, 3, 3]


def test_too_many_crashes_in_the_window_is_a_crash_loop() -> None:
    machine = ready_machine()
    for i in range(4):
        machine.handle(Crashed(float(i), f"exited {i}"))
        machine.handle(RetryDue(float(i)))
    assert machine.handle(Crashed(5.0, "exited 9 — fatal")) == []
    assert machine.state is State.FAILED
    assert machine.status.reason == "crash loop: 5 crashes in 60 s; last: exited 9 — fatal"
    assert machine.handle(RetryDue(6.0)) == []  # a stale timer does nothing


def test_crashes_outside_the_window_do_not_count() -> None:
    machine = ready_machine()
    for i in range(10):
        now = i * 20.0  # 3 crashes per 60 s at most
        commands = machine.handle(Crashed(now, "x"))
        assert machine.state is State.BACKOFF, i
        assert isinstance(commands[0], ScheduleRetry)
        machine.handle(RetryDue(now))


def test_a_healthy_period_resets_the_backoff() -> None:
    machine = ready_machine()
    [first] = machine.handle(Crashed(10, "x"))
    machine.handle(RetryDue(11))
    [second] = machine.handle(Crashed(12, "x"))
    assert (first, second) == (ScheduleRetry(1), ScheduleRetry(2))
    machine.handle(RetryDue(14))
    machine.handle(BecameReady(15))
    [after_healthy] = machine.handle(Crashed(15 + 300, "x"))
    assert after_healthy == ScheduleRetry(1)


def test_a_permanent_failure_fails_at_once() -> None:
    machine = Lifecycle(POLICY)
    machine.handle(StartRequested(0))
    assert machine.handle(Crashed(0.1, "command not found: nope", permanent=True)) == []
    assert machine.state is State.FAILED
    assert machine.status.reason == "command not found: nope"


def test_restart_from_failed_clears_the_history() -> None:
    machine = ready_machine()
    for i in range(5):
        machine.handle(Crashed(float(i), "x"))
        machine.handle(RetryDue(float(i)))
    assert machine.state is State.FAILED
    assert machine.handle(StartRequested(10)) == [Spawn()]
    assert machine.handle(Crashed(11, "x")) == [ScheduleRetry(1)]


def test_stop_shuts_down_and_cancels_a_pending_retry() -> None:
    machine = ready_machine()
    assert machine.handle(StopRequested(2)) == [Shutdown()]
    assert machine.state is State.STOPPED
    assert machine.handle(Crashed(3, "exited 0")) == []  # the exit we caused is not a crash

    machine = ready_machine()
    machine.handle(Crashed(2, "x"))
    assert machine.handle(StopRequested(2.5)) == [CancelRetry()]
    assert machine.handle(RetryDue(3)) == []


def test_disable_and_start_from_backoff() -> None:
    machine = ready_machine()
    assert machine.handle(DisableRequested(1)) == [Shutdown()]
    assert machine.state is State.DISABLED
    machine = ready_machine()
    machine.handle(Crashed(2, "x"))
    assert machine.handle(StartRequested(2.1)) == [CancelRetry(), Spawn()]


def test_status_describes_itself() -> None:
    machine = ready_machine()
    machine.handle(Crashed(2, "exited 3 — fatal: no key"))
    assert machine.status.describe() == "backoff: exited 3 — fatal: no key (retry in 1 s)"
    assert repr(State.READY) == "<State ready>"


def test_a_server_that_needs_a_sign_in_waits_for_the_user_without_retrying() -> None:
    machine = ready_machine()
    for _ in range(POLICY.crash_limit - 1):  # earlier crashes do not make it a crash loop later
        machine.handle(Crashed(2, "exited 1"))
        machine.handle(RetryDue(3))
    assert machine.handle(Crashed(4, "sign in with `mcpmanager login x`", sign_in=True)) == []
    assert machine.status == machine.status.__class__(State.NEEDS_SIGN_IN, "sign in with `mcpmanager login x`", 4, 4)
    assert machine.handle(RetryDue(5)) == []  # no retry scheduled, none taken
    assert machine.handle(StartRequested(6)) == [Spawn()]  # signed in: connect again
    assert machine.handle(Crashed(7, "exited 1")) == [ScheduleRetry(1)]  # counted from scratch
