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
        signals.close()
        await engine.stop()
