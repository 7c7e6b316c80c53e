"""The first run: mcpmanager shows its bundled demo servers at once (so a new user sees everything
work without installing anything) and offers to bring in the servers their clients already have
(every client of `core/clients/locations.CLIENTS`), or to keep the demo. Either
way a config file is written and the banner goes; it is not shown again once a config exists.

Any other change saves the config too (Servers › Add…, a tool toggled, an alias): the demo servers
are then in the user's file beside it. The banner says so instead of "nothing is saved", and offers
only what is still to choose: importing (beside what is there now) or closing it."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from mcpmanager.core.clients.locations import client_names
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
        self.demo_servers = list(ctx.engine.config.servers)  # what runs before anything is saved
        if not ctx.demo:
            self.hide()
            return
        ctx.signals.serversChanged.connect(self._config_applied)
        self.found = [c for c in find_client_configs(home or Path.home()) if c.servers]
        servers = ", ".join(ctx.engine.config.servers)
        text = (
            f"<b>Welcome.</b> These are mcpmanager's demo servers ({servers}), running so you can see "
            f"everything work. Nothing is saved until you choose: bring in your own servers, or keep these."
        )
        if not self.found:
            text += f" No {client_names()} config was found: add servers with Servers › Add…"
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
        self.keep = QPushButton("Keep the demo servers")
        self.keep.clicked.connect(self.keep_demo)
        self.row.addWidget(self.keep)
        self.buttons.append(self.keep)
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

    def _config_applied(self) -> None:
        """A change made elsewhere saved the config file: say what is in it now."""
        if not self.ctx.demo or not self.ctx.control.path.exists():
            return  # still nothing saved, or the banner's own choice (it closes the banner itself)
        self.ctx.demo = False
        kept = [name for name in self.demo_servers if name in self.ctx.engine.config.servers]
        text = f"<b>Saved.</b> Your change is in {html.escape(str(self.ctx.control.path))}"
        if kept:
            text += (
                f", and the demo servers ({html.escape(', '.join(kept))}) are in it too: remove them on the "
                "Servers page when you no longer want them."
            )
        else:
            text += "."
        if self.found:
            text += " Your clients' servers can still be imported beside what is there."
        self.message.setText(text)
        self.keep.hide()  # kept already
        self.buttons.remove(self.keep)
        close = QPushButton("Close")
        close.clicked.connect(lambda: self._done("closed after a change saved the config"))
        self.row.insertWidget(len(self.buttons), close)
        self.buttons.append(close)

    def _done(self, what: str) -> None:
        self.ctx.demo = False
        self.hide()
        self.done = what
