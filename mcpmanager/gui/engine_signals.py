"""The one adapter from the engine's events to Qt: batched signals the window's models follow.

The engine calls its listeners on the event loop, which under qasync is Qt's own thread, so nothing
crosses threads here. What it does is coalesce: a server restarting in a loop, a catalogue of
thousands of tools arriving, or a client calling in a tight loop must not redraw the window once
per event. Events are gathered and let out at most every `interval_ms` as one signal each.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.events import CatalogueChanged, ConfigApplied, ConfigRejected, EngineEvent, PinsChanged
from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.core.supervisor.events import OffersChanged, ResourceUpdated, ServerMessage, StatusChanged, ToolsChanged

INTERVAL_MS = 100


class EngineSignals(QObject):
    statusChanged = Signal(object)  # set[str]: servers whose state (or tools, prompts, resources) changed
    serversChanged = Signal()  # servers came, went or were replaced (a config was applied)
    catalogueChanged = Signal()  # tools, exposed names or tool settings changed
    offersChanged = Signal()  # the prompts, resources or resource templates clients see changed
    callsChanged = Signal(object)  # list[CallRecord], in the order they happened (a call may repeat)
    configRejected = Signal(str)  # the config file changed but does not load: the reason

    def __init__(self, engine: Engine, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.engine = engine
        self._servers: set[str] = set()
        self._calls: list[CallRecord] = []
        self._catalogue = False
        self._offers = False
        self._applied = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)
        # The merged offerings, not each server's OffersChanged: a config change (a server disabled)
        # changes what clients see without any server listing anew.
        self._unsubscribe: list[Callable[[], None]] = [
            engine.events.connect(self._on_event),
            engine.offerings.changed.connect(self._on_offers),
        ]

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self._timer.stop()

    def _on_offers(self, _kinds: frozenset[str]) -> None:
        self._offers = True
        if not self._timer.isActive():
            self._timer.start()

    def _on_event(self, event: EngineEvent) -> None:
        if isinstance(event, ServerMessage | ResourceUpdated):
            return  # nothing the window shows: log messages reach the stderr pane through the server's log
        if isinstance(event, StatusChanged | ToolsChanged | OffersChanged):
            self._servers.add(event.server)
        elif isinstance(event, CatalogueChanged | PinsChanged):  # the held tools' watch follows both
            self._catalogue = True
        elif isinstance(event, ConfigApplied):
            self._applied = True
            self._catalogue = True
        elif isinstance(event, CallRecord):
            self._calls.append(event)
        elif isinstance(event, ConfigRejected):
            self.configRejected.emit(event.reason)  # rare and worth showing at once
            return
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Let out what gathered (the timer does this; tests may call it to skip the wait)."""
        self._timer.stop()
        servers, self._servers = self._servers, set()
        calls, self._calls = self._calls, []
        applied, self._applied = self._applied, False
        catalogue, self._catalogue = self._catalogue, False
        offers, self._offers = self._offers, False
        if applied:
            self.serversChanged.emit()
        if servers:
            self.statusChanged.emit(servers)
        if catalogue:
            self.catalogueChanged.emit()
        if offers:
            self.offersChanged.emit()
        if calls:
            self.callsChanged.emit(calls)
