"""The first run: mcpmanager shows its bundled demo servers at once (so a new user sees everything
work without installing anything) and offers to bring in the servers their clients already have
(Claude Desktop, Cursor, VS Code, Claude Code), or to keep the demo. Either way a config file is
written and the banner goes; it is not shown again once a config exists."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from mcpmanager.core.clients.reading import ClientConfig, find_client_configs
from mcpmanager.gui.context import GuiContext


class FirstRunBanner(QFrame):
    def __init__(self, ctx: GuiContext, home: Path | None = None) -> None:
        super().__init__()
        self.ctx = ctx
        self.setObjectName("firstRun")
        self.setStyleSheet("#firstRun { background: #ddf4ff; border-bottom: 1px solid #54aeff; }")
        self.found: list[ClientConfig] = []
        self.buttons: list[QPushButton] = []
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.row = QHBoxLayout()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addWidget(self.message)
        layout.addLayout(self.row)
        if not ctx.demo:
            self.hide()
            return
        self.found = [c for c in find_client_configs(home or Path.home()) if c.servers]
        servers = ", ".join(ctx.engine.config.servers)
        text = (
            f"<b>Welcome.</b> These are mcpmanager's demo servers ({servers}), running so you can see "
            f"everything work. Nothing is saved until you choose: bring in your own servers, or keep these."
        )
        if not self.found:
            text += (
                " No Claude Desktop, Cursor, VS Code or Claude Code config was found: add servers with Servers › Add…"
            )
        self.message.setText(text)
        for client in self.found:
            count = len(client.servers)
            button = QPushButton(f"Import {count} server{'s' if count != 1 else ''} from {client.label}")
            tip = str(client.path)
            if client.problems:
                tip += "\n\n" + "\n".join(client.problems)
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, c=client: self.import_from(c))
            self.row.addWidget(button)
            self.buttons.append(button)
        keep = QPushButton("Keep the demo servers")
        keep.clicked.connect(self.keep_demo)
        self.row.addWidget(keep)
        self.buttons.append(keep)
        self.row.addStretch(1)

    def import_from(self, client: ClientConfig) -> None:
        async def change() -> None:
            added, _ = await self.ctx.control.import_servers((server, client.path) for server in client.servers)
            self._done(f"{len(added)} servers imported from {client.label}")

        self.ctx.run(change(), f"import the servers of {client.label}")

    def keep_demo(self) -> None:
        async def change() -> None:
            await self.ctx.control.keep()
            self._done("demo servers kept")

        self.ctx.run(change(), "keep the demo servers")

    def _done(self, what: str) -> None:
        self.ctx.demo = False
        self.hide()
        self.done = what
