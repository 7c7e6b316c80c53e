"""GUI tests: real widgets on the offscreen platform, on a qasync loop, in front of a real engine.

Every test here is `async` and runs on a `qasync.QEventLoop` (pytest-asyncio's loop factory hook,
picked per test item, so core and e2e tests keep their own loops). Inside, wait with `until()`
(which sleeps on the loop, so both Qt and asyncio run), never with `qtbot.wait*`: a nested Qt loop
inside a coroutine breaks qasync (docs/development.md, Rules the code keeps).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import qasync
from PySide6.QtWidgets import QApplication

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


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


@pytest.fixture(scope="session")
def qapp_args() -> list[str]:
    return ["mcpmanager-tests"]
