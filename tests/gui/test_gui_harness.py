"""The GUI harness itself: a test's engine context ends only once the window's changes have."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.helpers.gui import gui_context, window_tasks


async def test_the_context_ends_after_the_changes_the_window_began(tmp_path: Path, qtbot: QtBot) -> None:
    """A change whose work is in a thread (as every write to a file is) and what it starts once that
    is done both end inside the test's loop, not in pytest-qt's event processing after the test."""
    done: list[str] = []
    async with gui_context(tmp_path / "engine", {}) as ctx:

        async def look_again() -> None:
            done.append("looked")

        async def write() -> None:
            await asyncio.to_thread(time.sleep, 0.3)
            ctx.run(look_again(), "look again")

        ctx.run(write(), "write")
    assert not window_tasks() and done == ["looked"]
