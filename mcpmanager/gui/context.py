"""What every part of the window is given: the engine to observe, the engine signals, the
control to change things through, and the error funnel; plus running a change in the background."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.engine.control import Control, ControlError
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.tasks import spawn
from mcpmanager.gui.engine_signals import EngineSignals
from mcpmanager.gui.errors import ErrorFunnel


@dataclass
class GuiContext:
    engine: Engine
    signals: EngineSignals
    control: Control
    errors: ErrorFunnel
    demo: bool = False  # running the bundled demo servers (no config file yet)

    def run(self, change: Coroutine[Any, Any, object], doing: str) -> asyncio.Task[None]:
        """Run a change without blocking the window (never a nested event loop: see docs/development.md); a
        change refused (`ControlError`) or failing is shown, never lost."""

        async def guarded() -> None:
            try:
                await change
            except ControlError as exc:
                self.errors.report(f"Could not {doing}: {exc}")
            except Exception as exc:
                self.errors.report_exception(f"Could not {doing}", exc)

        return spawn(guarded(), name=f"gui: {doing}")
