"""The one state line (window, log and `status`), pinned for every state."""

from __future__ import annotations

import pytest

from mcpmanager.core.supervisor.lifecycle import State, Status
from mcpmanager.core.supervisor.state_line import STARTING, state_detail, state_line

CRASH = "exited 3 — fatal: no API key"
FULL = "cannot write a.log: No space left on device"


CASES: list[tuple[State, str, float | None, int, str]] = [
    (State.STOPPED, "", None, 0, "stopped"),
    (State.STARTING, "", None, 0, "starting"),
    (State.STARTING, "restarting", None, 2, f"starting: restarting; last exit: {CRASH}"),
    (State.READY, "", None, 3, "ready"),
    (State.BACKOFF, CRASH, 4.0, 1, f"backoff: {CRASH} (retry in 4 s)"),
    (State.BACKOFF, CRASH, 0.25, 1, f"backoff: {CRASH} (retry in 0.25 s)"),
    (
        State.FAILED,
        f"crash loop: 5 crashes in 60 s; last: {CRASH}",
        None,
        4,
        f"failed: crash loop: 5 crashes in 60 s; last: {CRASH}",
    ),
    (State.FAILED, "command not found: weather-mcp", None, 0, "failed: command not found: weather-mcp"),
    (State.DISABLED, "", None, 0, "disabled"),
    (State.NEEDS_SIGN_IN, "run `mcpmanager login notes`", None, 0, "needs-sign-in: run `mcpmanager login notes`"),
]


def test_every_state_has_its_case() -> None:
    assert {case[0] for case in CASES} == set(State)


@pytest.mark.parametrize(("state", "reason", "retry_in", "restarts", "line"), CASES)
def test_every_state_as_one_line(state: State, reason: str, retry_in: float | None, restarts: int, line: str) -> None:
    assert state_line(state.value, reason, retry_in, restarts=restarts, last_exit=CRASH) == line
    # The table that gives the state its own column gets the same words after it.
    assert state_detail(state.value, reason, retry_in, restarts=restarts, last_exit=CRASH) == line.removeprefix(
        state.value
    ).removeprefix(": ")


def test_the_last_exit_only_while_it_restarts() -> None:
    # The first start has no crash behind it; in backoff the reason is the crash itself.
    assert state_line("starting", "", restarts=0, last_exit=CRASH) == "starting"
    assert state_line("starting", "restarting", restarts=1) == "starting: restarting"
    assert state_line("starting", "", restarts=1, last_exit=CRASH) == f"starting: last exit: {CRASH}"
    assert state_detail("starting", "", restarts=1, last_exit=CRASH) == f"last exit: {CRASH}"
    assert State.STARTING.value == STARTING


def test_a_log_file_that_cannot_be_written_comes_last() -> None:
    assert state_line("ready", logs=FULL) == f"ready; logs: {FULL}"
    assert state_line("backoff", CRASH, 2, logs=FULL) == f"backoff: {CRASH} (retry in 2 s); logs: {FULL}"
    assert state_detail("ready", logs=FULL) == f"logs: {FULL}"
    assert state_line("backoff", "", 2) == "backoff (retry in 2 s)"
    assert state_detail("backoff", "", 2) == "(retry in 2 s)"


def test_the_state_machine_s_status_is_the_same_line() -> None:
    status = Status(State.BACKOFF, CRASH, retry_in=1.0, restarts=1)
    assert status.describe() == state_line("backoff", CRASH, 1.0) == f"backoff: {CRASH} (retry in 1 s)"
