"""The GUI test harness: waiting on the loop, and a real engine with its signals, control and funnel."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.engine.control import Control
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import running_tasks
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.engine_signals import EngineSignals
from mcpmanager.gui.errors import ErrorFunnel
from tests.helpers.fixture_servers import FAST, write_config


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
    folder: Path, servers: dict[str, Any], mode: Mode = "discovery", started: bool = True, **sections: Any
) -> AsyncIterator[GuiContext]:
    """A real engine on a real config file with these servers (`fixture_servers.fixture`), its signals,
    control and error funnel (`started=False`: the test starts the engine, as the app does after
    building the window). Stops every server on the way out."""
    sections.setdefault("supervisor", FAST)
    path = write_config(folder, servers, **sections)
    home = folder / "home"
    paths = Paths.resolve(config_file=path, env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(load_config(path), paths, mode)
    signals = EngineSignals(engine, interval_ms=20)
    funnel = ErrorFunnel()
    ctx = GuiContext(engine, signals, Control(engine.paths.config_file, engine), funnel)
    if started:
        await engine.start()
    try:
        yield ctx
    finally:
        await settled()
        signals.close()
        await engine.stop()


def window_tasks() -> list[asyncio.Task[Any]]:
    """The changes the window began (`GuiContext.run` names them `gui: …`) that have not ended."""
    return [task for task in running_tasks() if task.get_name().startswith("gui: ")]


async def settled(timeout: float = 20.0) -> None:
    """Wait until nothing the window began is still running (what one change starts on its way out,
    a look at the files after a write, included). A test that ended with one in flight left it to
    pytest-qt, which processes Qt events between the test and its loop's end: on qasync the rest of
    the change then ran with no running loop, and the `spawn` in it failed the test ("no running
    event loop" from ClientsPage.refresh after an undo, seen on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while left := window_tasks():
        if time.monotonic() > deadline:
            names = ", ".join(sorted(task.get_name() for task in left))
            raise AssertionError(f"the window's changes still running after {timeout} s: {names}")
        await asyncio.sleep(0.02)
