"""The one observer type: listeners in order, disconnecting, and a failing listener that neither
stops the others nor reaches the emitter."""

from __future__ import annotations

import logging

import pytest

from mcpmanager.core.signals import Signal


def test_listeners_run_in_order_until_disconnected() -> None:
    signal: Signal[int] = Signal("numbers")
    seen: list[tuple[str, int]] = []
    disconnect_a = signal.connect(lambda n: seen.append(("a", n)))
    signal.connect(lambda n: seen.append(("b", n)))
    signal.emit(1)
    disconnect_a()
    disconnect_a()  # twice is harmless
    signal.emit(2)
    assert seen == [("a", 1), ("b", 1), ("b", 2)]
    assert len(signal) == 1


def test_a_failing_listener_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    signal: Signal[str] = Signal("lines")
    seen: list[str] = []

    def broken(value: str) -> None:
        raise ValueError("a pane's bug")

    signal.connect(broken)
    signal.connect(seen.append)
    with caplog.at_level(logging.ERROR, logger="mcpmanager.core.signals"):
        signal.emit("x")  # does not raise
    assert seen == ["x"]
    assert "a listener of lines failed" in caplog.text and "a pane's bug" in caplog.text
