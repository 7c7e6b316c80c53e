"""The one observer type of the core: a signal its owner emits and front ends connect to.

The engine, the catalogue, the activity log and every server's stderr log tell their observers
through a `Signal`. Listeners run at once, on the caller's loop, in the order they connected. A
listener that raises is logged and the others still run: an observer's bug (a window pane) must never
stop the engine, a server's stderr reading or a call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
Listener = Callable[[T], None]


class Signal(Generic[T]):
    def __init__(self, name: str) -> None:
        self.name = name  # says which signal a failing listener was connected to
        self._listeners: list[Callable[[T], None]] = []

    def connect(self, listener: Callable[[T], None]) -> Callable[[], None]:
        """Call `listener` with every value emitted from now on; returns what disconnects it."""
        self._listeners.append(listener)
        return lambda: self.disconnect(listener)

    def disconnect(self, listener: Callable[[T], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def emit(self, value: T) -> None:
        for listener in list(self._listeners):
            try:
                listener(value)
            except Exception:
                logger.exception("a listener of %s failed", self.name)

    def __len__(self) -> int:
        return len(self._listeners)
