"""A server's state in one line of text, the one way the window, the log and `status` write it.

    ready
    backoff: exited 3 — fatal: no API key (retry in 4 s)
    starting: restarting; last exit: exited 3 — fatal: no API key
    failed: crash loop: 5 crashes in 60 s; last: exited 1
    ready; logs: cannot write a.log: No space left on device

The parts are plain values (not a `Downstream`) so that `status` writes the same line from what an
engine advertises as the window does from the live server.
"""

from __future__ import annotations

STARTING = "starting"  # `State.STARTING.value` (the state machine imports this module; a test ties them)


def state_line(
    state: str,
    reason: str = "",
    retry_in: float | None = None,
    *,
    restarts: int = 0,
    last_exit: str | None = None,
    logs: str | None = None,
) -> str:
    """The state, why, when it is tried again, and why its log file cannot be written (if so)."""
    said = _said(state, reason, restarts, last_exit)
    return _joined(f"{state}: {said}" if said else state, retry_in, logs)


def state_detail(
    state: str,
    reason: str = "",
    retry_in: float | None = None,
    *,
    restarts: int = 0,
    last_exit: str | None = None,
    logs: str | None = None,
) -> str:
    """`state_line` without the state, for a table that gives the state a column of its own."""
    return _joined(_said(state, reason, restarts, last_exit), retry_in, logs)


def _said(state: str, reason: str, restarts: int, last_exit: str | None) -> str:
    if state == STARTING and restarts and last_exit:
        # A restart's reason is only "restarting": it must not hide why the server crashed.
        return f"{reason}; last exit: {last_exit}" if reason else f"last exit: {last_exit}"
    return reason


def _joined(text: str, retry_in: float | None, logs: str | None) -> str:
    if retry_in is not None:
        text = f"{text} (retry in {retry_in:g} s)" if text else f"(retry in {retry_in:g} s)"
    if logs:  # a full disk: the server serves on, its log file waits
        text = f"{text}; logs: {logs}" if text else f"logs: {logs}"
    return text
