"""The status bar: where clients connect, how many are connected, what the resting context costs
(and what direct exposure would), and how many servers are ready."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QStatusBar

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.context import GuiContext

CLIENTS_POLL_MS = 1000  # connections come and go without an engine event
TOKENS_DELAY_MS = 300


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
        ctx.signals.statusChanged.connect(self._refresh_servers)
        ctx.signals.serversChanged.connect(self.refresh)
        # The context figures encode every tool: while servers come up one after another, once the
        # catalogue has been quiet for a moment, not once per server.
        self._tokens_timer = QTimer(self)
        self._tokens_timer.setSingleShot(True)
        self._tokens_timer.setInterval(TOKENS_DELAY_MS)
        self._tokens_timer.timeout.connect(self._refresh_context)
        ctx.signals.catalogueChanged.connect(self._tokens_timer.start)
        self._timer = QTimer(self)
        self._timer.setInterval(CLIENTS_POLL_MS)
        self._timer.timeout.connect(self._refresh_clients)
        self._timer.start()
        self.refresh()

    def refresh(self, *_: object) -> None:
        self.endpoint.setText(f"Endpoint: {self.ctx.engine.endpoint}")
        self._refresh_context()
        self._refresh_servers()
        self._refresh_clients()

    def _refresh_context(self) -> None:
        proxy = self.ctx.engine.router
        resting, direct = proxy.context_tokens()
        if proxy.mode == "discovery":
            self.context.setText(f"Resting context {resting:,} tokens (direct exposure would be {direct:,})")
        else:
            self.context.setText(f"Direct mode: {direct:,} tokens of tools")

    def _refresh_servers(self, *_: object) -> None:
        engine = self.ctx.engine
        states = [d.status.state for d in engine.downstreams.values()]
        enabled = [s for s in states if s is not State.DISABLED]
        ready = sum(1 for s in enabled if s is State.READY)
        self.servers.setText(f"Servers ready {ready}/{len(enabled)}")

    def _refresh_clients(self) -> None:
        count = self.ctx.engine.router.clients()
        self.clients.setText(f"{count} client{'s' if count != 1 else ''} connected")
