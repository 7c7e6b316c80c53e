"""The status bar: where clients connect, how many are connected, what the resting context costs
(and what direct exposure would), and how many servers are ready."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QStatusBar

from mcpmanager.core.states import State
from mcpmanager.gui.context import GuiContext

CLIENTS_POLL_MS = 1000  # connections come and go without an engine event


class StatusBar(QStatusBar):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.endpoint = QLabel()
        self.endpoint.setObjectName("endpoint")
        self.clients = QLabel()
        self.context = QLabel()
        self.servers = QLabel()
        for label in (self.endpoint, self.clients, self.context, self.servers):
            label.setContentsMargins(8, 0, 8, 0)
        self.addWidget(self.endpoint)
        self.addWidget(self.clients)
        self.addPermanentWidget(self.context)
        self.addPermanentWidget(self.servers)
        ctx.bridge.statusChanged.connect(self.refresh)
        ctx.bridge.catalogueChanged.connect(self.refresh)
        ctx.bridge.serversChanged.connect(self.refresh)
        self._timer = QTimer(self)
        self._timer.setInterval(CLIENTS_POLL_MS)
        self._timer.timeout.connect(self._refresh_clients)
        self._timer.start()
        self.refresh()

    def refresh(self, *_: object) -> None:
        engine = self.ctx.engine
        self.endpoint.setText(f"Endpoint: {engine.endpoint}")
        resting, direct = engine.proxy.context_tokens()
        if engine.proxy.mode == "discovery":
            self.context.setText(f"Resting context {resting:,} tokens (direct exposure would be {direct:,})")
        else:
            self.context.setText(f"Direct mode: {direct:,} tokens of tools")
        states = [d.status.state for d in engine.downstreams.values()]
        enabled = [s for s in states if s is not State.DISABLED]
        ready = sum(1 for s in enabled if s is State.READY)
        self.servers.setText(f"Servers ready {ready}/{len(enabled)}")
        self._refresh_clients()

    def _refresh_clients(self) -> None:
        count = self.ctx.engine.proxy.clients()
        self.clients.setText(f"{count} client{'s' if count != 1 else ''} connected")
