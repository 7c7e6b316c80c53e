"""GUI tests: real widgets on the offscreen platform, on a qasync loop, in front of a real engine.

Every test here is `async` and runs on a `qasync.QEventLoop` (pytest-asyncio's loop factory hook,
picked per test item, so core and e2e tests keep their own loops). Inside, wait with `until()`
(which sleeps on the loop, so both Qt and asyncio run), never with `qtbot.wait*`: a nested Qt loop
inside a coroutine breaks qasync (docs/development.md, Rules the code keeps).
"""

from __future__ import annotations

import gc
import os
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent
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


def _join_child_watchers(timeout: float) -> None:
    """Wait for asyncio's child watcher threads (`asyncio-waitpid-N`): a child that exited has told
    its loop by then, or never will."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if "waitpid-" in thread.name:
            thread.join(max(0.0, deadline - time.monotonic()))


@pytest.fixture(autouse=True)
def _nothing_outlives_the_test() -> Iterator[None]:
    """A process, pipe or transport a test leaves behind fails that test, not a later one.

    Left alone, a child never reaped is noticed only when its `Popen` is collected, maybe tests
    later, inside whatever test is then processing Qt events ("subprocess N is still running").
    This runs after the test's loop has closed: it waits for the child watchers, lets Qt deliver what
    is still queued for that loop (the watcher's call_soon_threadsafe rides a queued Qt signal; widgets
    wait in deleteLater), collects, and fails the test with every ResourceWarning that came out."""
    yield
    assert not _LOOPS or _LOOPS[-1].is_closed(), "the guard must run after the test's loop closed"
    _join_child_watchers(timeout=5.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()
    leaks = sorted({str(w.message) for w in caught if issubclass(w.category, ResourceWarning)})
    if leaks:
        pytest.fail("left behind when this test's loop closed:\n  " + "\n  ".join(leaks), pytrace=False)
