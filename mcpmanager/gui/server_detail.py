"""One server in detail: its state and reason, command line, pid, uptime, restarts, last exit, the
live stderr pane, and what it offers: its tools, prompts and resources (with templates), each tab
with its count. Follows the server through restarts and config changes (a changed server is a new
Downstream with a new log: the pane re-attaches)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.catalogue.offerings import ServerOffers
from mcpmanager.core.config.servers import shown_command
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui import style
from mcpmanager.gui.catalogue_offers import arguments_text
from mcpmanager.gui.log_view import LogView
from mcpmanager.gui.sign_in_bar import SignInBar


def command_line(downstream: Downstream) -> str:
    """Its command line, secrets masked (`--api-key ***`): the window is often on a shared screen."""
    return shown_command(downstream.config)


def uptime(since: float | None, now: float) -> str:
    if since is None:
        return "—"
    seconds = int(now - since)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {seconds:02d} s"


class ServerDetail(QWidget):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.name: str | None = None
        self._downstream: Downstream | None = None
        self.light = QLabel()
        self.title = QLabel()
        self.title.setStyleSheet("font-size: 15px; font-weight: 600;")
        self.state = QLabel()
        self.state.setWordWrap(True)
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        header = QHBoxLayout()
        header.addWidget(self.light)
        header.addWidget(self.title)
        header.addStretch(1)

        self.facts: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        for label in ("Command", "PID", "Uptime", "Restarts", "Last exit", "Protocol", "Log file"):
            value = QLabel()
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setWordWrap(True)
            self.facts[label] = value
            form.addRow(f"{label}:", value)
        self.facts["Command"].setFont(style.monospace())

        self.log_view = LogView()
        self.tools = _list("Tool", "Description")
        self.prompts = _list("Prompt", "Arguments", "Description")
        self.resources = _list("URI", "Name", "Description")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.log_view, "Stderr")
        for tree in (self.tools, self.prompts, self.resources):
            self.tabs.addTab(tree, "")

        self.sign_in = SignInBar(engine)  # a remote server that signs in with OAuth
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.state)
        layout.addWidget(self.sign_in)
        layout.addLayout(form)
        layout.addWidget(self.tabs, 1)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._clock.start()
        self.show_server(None)

    def show_server(self, name: str | None) -> None:
        """Show `name` (None: nothing selected); also call it when that server may have changed."""
        self.name = name
        downstream = self.engine.downstreams.get(name) if name is not None else None
        if downstream is not self._downstream:
            self._downstream = downstream
            if downstream is None:
                self.log_view.attach(None)
            else:
                self.log_view.attach(downstream.log, downstream.log.path)
        self.setEnabled(downstream is not None)
        self.refresh()

    def refresh(self) -> None:
        downstream = self._downstream
        self.sign_in.show_for(downstream)
        if downstream is None:
            self.title.setText(self.name or "No server selected")
            self.state.setText("")
            self.light.clear()
            for value in self.facts.values():
                value.setText("")
            for tree in (self.tools, self.prompts, self.resources):
                _fill(tree, [])
            self._count_tabs(None, None)
            return
        status = downstream.status
        self.light.setPixmap(style.light(status.state, 14).pixmap(14, 14))
        self.title.setText(downstream.name)
        self.state.setText(downstream.state_line())
        self.facts["Command"].setText(command_line(downstream))
        process = downstream.process
        self.facts["PID"].setText(str(process.pid) if process is not None and process.pid else "—")
        self.facts["Restarts"].setText(str(status.restarts))
        self.facts["Last exit"].setText(downstream.last_exit or "—")
        self.facts["Protocol"].setText(downstream.protocol_version or "—")
        self.facts["Log file"].setText(str(downstream.log.path) if downstream.log.path else "—")
        self._tick()
        self._fill_lists(downstream)

    def _tick(self) -> None:
        downstream = self._downstream
        if downstream is not None:
            up = downstream.ready_since if downstream.status.state is State.READY else None
            self.facts["Uptime"].setText(uptime(up, time.time()))

    def _fill_lists(self, downstream: Downstream) -> None:
        tools = (
            downstream.tools if downstream.tools is not None else self.engine.catalogue.server_tools(downstream.name)
        )
        _fill(self.tools, [[_text(t.get("name")), _text(t.get("description"))] for t in tools or []])
        offers = self.engine.offerings.server_offers(downstream.name)
        listed = offers or ServerOffers()  # None: the server has not said yet
        prompts = [[_text(p.get("name")), arguments_text(p), _text(p.get("description"))] for p in listed.prompts]
        _fill(self.prompts, prompts)
        resources = [[_text(r.get("uri")), _text(r.get("name")), _text(r.get("description"))] for r in listed.resources]
        resources += [
            [_text(t.get("uriTemplate")), f"{_text(t.get('name'))} (template)".lstrip(), _text(t.get("description"))]
            for t in listed.templates
        ]
        _fill(self.resources, resources)
        self._count_tabs(len(tools) if tools is not None else None, offers)

    def _count_tabs(self, tools: int | None, offers: ServerOffers | None) -> None:
        """`Tools (17)`, `Prompts (4)`, `Resources (9)`: bare until the server has said (nothing cached)."""
        prompts = len(offers.prompts) if offers is not None else None
        resources = len(offers.resources) + len(offers.templates) if offers is not None else None
        counts = (
            (self.tools, "Tools", tools),
            (self.prompts, "Prompts", prompts),
            (self.resources, "Resources", resources),
        )
        for tree, title, count in counts:
            self.tabs.setTabText(self.tabs.indexOf(tree), title if count is None else f"{title} ({count})")


def _list(*headers: str) -> QTreeWidget:
    tree = QTreeWidget()
    tree.setHeaderLabels(list(headers))
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    return tree


def _fill(tree: QTreeWidget, rows: list[list[str]]) -> None:
    """Show `rows`, rebuilding only when they changed: a refresh comes with every state change."""
    columns = tree.columnCount()
    items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
    shown = [[item.text(c) for c in range(columns)] for item in items if item is not None]
    if rows == shown:
        return
    tree.clear()
    for row in rows:
        item = QTreeWidgetItem(row)
        item.setToolTip(columns - 1, row[-1])
        tree.addTopLevelItem(item)
    tree.resizeColumnToContents(0)


def _text(value: object) -> str:
    """One line of what a server listed (descriptions may span lines; a missing field is empty)."""
    return " ".join(str(value or "").split())
