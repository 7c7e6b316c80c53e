"""The window comes up on a real engine and follows it (a first check of the harness)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.main_window import MainWindow
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until


async def test_the_window_follows_the_engine(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        await until(lambda: ctx.engine.downstreams["alpha"].status.state is State.READY)
        await until(lambda: window.status.servers.text() == "Servers ready 1/1")
        assert window.status.context.text().startswith("Resting context ")
