"""GUI tests: real widgets on the offscreen platform, on a qasync loop, in front of a real engine.

Every test here is `async` and runs on a `qasync.QEventLoop` (pytest-asyncio's loop factory hook,
picked per test item, so core and e2e tests keep their own loops). Inside, wait with `until()`
(which sleeps on the loop, so both Qt and asyncio run), never with `qtbot.wait*`: a nested Qt loop
inside a coroutine breaks qasync (docs/development.md, Rules the code keeps).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from mcpmanager.core.config.load import load_config
from mcpmanager.core.engine.control import Control
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.system.paths import Paths
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.engine_signals import EngineSignals
from mcpmanager.gui.errors import ErrorFunnel
from tests.e2e.support import FAST, fixture, write_config

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

__all__ = ["FAST", "fixture", "gui_context", "until"]


def _app() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    # As the app does (its tray keeps it alive): closing a test's only window must not quit the
    # application, which would stop the qasync loop under the test.
    app.setQuitOnLastWindowClosed(False)
    return app


# Every test's event loop, kept until the session ends. qasync leaves cancelled timers registered
# with Qt until they fire; a closed loop garbage-collected meanwhile (possibly on a worker thread:
# saves run in `asyncio.to_thread`) leaves them pointing at freed memory, and the next one to fire
# crashes the process (a segfault in QTimerInfoList::activateTimers, seen under gdb). Kept alive,
# its timers fire later and qasync itself kills them.
_LOOPS: list[qasync.QEventLoop] = []


def _new_loop() -> qasync.QEventLoop:
    loop = qasync.QEventLoop(_app())
    _LOOPS.append(loop)
    return loop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    return {"qasync": _new_loop}


async def until(predicate: Callable[[], object], timeout: float = 20.0, interval: float = 0.02) -> None:
    """Poll `predicate` while the loop (Qt and asyncio) runs; fail with its last value after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {predicate!r} (last: {value!r})")
        await asyncio.sleep(interval)


@asynccontextmanager
async def gui_context(
    folder: Path, servers: dict[str, Any], mode: str = "discovery", started: bool = True, **sections: Any
) -> AsyncIterator[GuiContext]:
    """A real engine on a real config file with these servers (see tests.e2e.support.fixture), its
    signals, control and error funnel (`started=False`: the test starts the engine, as the app does
    after building the window). Stops every server on the way out."""
    sections.setdefault("supervisor", FAST)
    path = write_config(folder, servers, **sections)
    home = folder / "home"
    paths = Paths.resolve(config_file=path, env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(load_config(path), paths, mode)  # type: ignore[arg-type]
    signals = EngineSignals(engine, interval_ms=20)
    funnel = ErrorFunnel()
    ctx = GuiContext(engine, signals, Control(engine.paths.config_file, engine), funnel)
    if started:
        await engine.start()
    try:
        yield ctx
    finally:
        signals.close()
        await engine.stop()


@pytest.fixture(scope="session")
def qapp_args() -> list[str]:
    return ["mcpmanager-tests"]
