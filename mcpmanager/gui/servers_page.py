"""The Servers page: the servers table with its toolbar and context menu, and the selected server's
detail (live stderr, facts, tools). Every action goes through `Control`; nothing here decides."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QPoint, QSortFilterProxyModel, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QMessageBox,
    QSplitter,
    QTableView,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.server_detail import ServerDetail
from mcpmanager.gui.server_editor import ServerEditor
from mcpmanager.gui.servers_model import NAME, SORT_ROLE, STATE, TOOLS, ServersModel


class ServersPage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.model = ServersModel(ctx.engine)
        self.sorted = QSortFilterProxyModel(self)
        self.sorted.setSourceModel(self.model)
        self.sorted.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.sorted)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(False)  # config order by default; a header click sorts
        self.table.horizontalHeader().sectionClicked.connect(self._sort_by)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TOOLS, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(STATE, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(NAME, 170)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.doubleClicked.connect(lambda _index: self.edit())
        self.table.selectionModel().selectionChanged.connect(self._selected)

        self.detail = ServerDetail(ctx.engine)
        self.editors: list[ServerEditor] = []  # open editors (non-modal), kept alive until closed
        self.commands = self._make_actions()
        toolbar = QToolBar()
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for key in ("add", "edit", "duplicate", "remove", None, "start", "stop", "restart", "enable", None, "log"):
            if key is None:
                toolbar.addSeparator()
            else:
                toolbar.addAction(self.commands[key])

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([350, 450])  # about a dozen servers at a glance, the detail below
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(toolbar)
        layout.addWidget(splitter, 1)

        ctx.signals.statusChanged.connect(self._status_changed)
        ctx.signals.serversChanged.connect(self._servers_changed)
        ctx.signals.catalogueChanged.connect(lambda: self.model.refresh(set(self.model.names)))
        if self.model.names:
            self.select(self.model.names[0])
        self._update_actions()

    # Selection ------------------------------------------------------------------------------------

    def selected(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.name_at(self.sorted.mapToSource(rows[0]).row()) if rows else None

    def select(self, name: str) -> None:
        row = self.model.row_of(name)
        if row >= 0:
            self.table.selectRow(self.sorted.mapFromSource(self.model.index(row, 0)).row())

    def _selected(self, *_: QItemSelection) -> None:
        self.detail.show_server(self.selected())
        self._update_actions()

    def _sort_by(self, column: int) -> None:
        order = self.table.horizontalHeader().sortIndicatorOrder()
        self.table.setSortingEnabled(True)
        self.sorted.sort(column, order)

    # Engine events --------------------------------------------------------------------------------

    def _status_changed(self, servers: set[str]) -> None:
        self.model.refresh(servers)
        if self.detail.name in servers:
            # show_server, not refresh: a server selected before the engine started it had no
            # process to show yet, and now has one.
            self.detail.show_server(self.detail.name)
        self._update_actions()

    def _servers_changed(self) -> None:
        keep = self.selected()
        self.model.reload()
        if keep is not None and keep in self.model.names:
            self.select(keep)
        elif self.model.names and self.selected() is None:
            self.select(self.model.names[0])
        self.detail.show_server(self.selected())  # a changed server is a new Downstream: re-attach
        self._update_actions()

    # Actions --------------------------------------------------------------------------------------

    def _make_actions(self) -> dict[str, QAction]:
        Shortcut = QKeySequence | QKeySequence.StandardKey | str | None

        def action(text: str, slot: Callable[[], object], shortcut: Shortcut = None) -> QAction:
            made = QAction(text, self)
            made.triggered.connect(slot)
            if shortcut is not None:
                made.setShortcut(QKeySequence(shortcut))
                made.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(made)
            return made

        return {
            "add": action("Add…", self.add, QKeySequence.StandardKey.New),
            "edit": action("Edit…", self.edit, "F2"),
            "duplicate": action("Duplicate…", self.duplicate),
            "remove": action("Remove", self.remove, QKeySequence.StandardKey.Delete),
            "start": action("Start", lambda: self._run("start")),
            "stop": action("Stop", lambda: self._run("stop")),
            "restart": action("Restart", lambda: self._run("restart"), "Ctrl+R"),
            "enable": action("Disable", self.toggle_enabled),
            "log": action("Open log file", self.open_log),
        }

    def _update_actions(self) -> None:
        name = self.selected()
        downstream = self.ctx.engine.downstreams.get(name) if name else None
        config = self.ctx.engine.config.servers.get(name) if name else None
        state = downstream.status.state if downstream is not None else None
        for key in ("edit", "duplicate", "remove", "enable", "log"):
            self.commands[key].setEnabled(config is not None)
        disabled = config is not None and config.disabled
        self.commands["enable"].setText("Enable" if disabled else "Disable")
        runnable = downstream is not None and not disabled
        self.commands["start"].setEnabled(runnable and state in (State.STOPPED, State.FAILED, State.BACKOFF))
        self.commands["stop"].setEnabled(runnable and state not in (State.STOPPED, State.DISABLED))
        self.commands["restart"].setEnabled(runnable)
        self.commands["log"].setEnabled(downstream is not None and downstream.log.path is not None)

    def _context_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        for key in ("start", "stop", "restart", "enable", None, "edit", "duplicate", "remove", None, "log"):
            if key is None:
                menu.addSeparator()
            else:
                menu.addAction(self.commands[key])
        menu.popup(self.table.viewport().mapToGlobal(position))

    def _run(self, what: str) -> None:
        name = self.selected()
        if name is None:
            return
        control = self.ctx.control
        change = {"start": control.start, "stop": control.stop, "restart": control.restart}[what](name)
        self.ctx.run(change, f"{what} {name}")

    def toggle_enabled(self) -> None:
        name = self.selected()
        config = self.ctx.engine.config.servers.get(name) if name else None
        if name is None or config is None:
            return
        verb = "enable" if config.disabled else "disable"
        self.ctx.run(self.ctx.control.set_enabled(name, config.disabled), f"{verb} {name}")

    def add(self) -> None:
        self._open_editor(ServerEditor(self.ctx, None, self))

    def edit(self) -> None:
        name = self.selected()
        config = self.ctx.engine.config.servers.get(name) if name else None
        if config is not None:
            self._open_editor(ServerEditor(self.ctx, config, self))

    def duplicate(self) -> None:
        name = self.selected()
        config = self.ctx.engine.config.servers.get(name) if name else None
        if config is not None:
            self._open_editor(ServerEditor.duplicate(self.ctx, config, self))

    def _open_editor(self, editor: ServerEditor) -> None:
        self.editors.append(editor)
        editor.saved.connect(self.select)
        editor.destroyed.connect(lambda *_: self.editors.remove(editor) if editor in self.editors else None)
        editor.show()

    def remove(self) -> None:
        name = self.selected()
        if name is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove server",
            f"Remove {name} from the config and stop it? Its tool settings stay in the file.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered(result: int) -> None:
            if result == QMessageBox.StandardButton.Yes:
                self.ctx.run(self.ctx.control.remove_server(name), f"remove {name}")

        box.finished.connect(answered)
        box.open()  # non-modal: a nested event loop would stall the engine (qasync)
        self.confirm = box

    def open_log(self) -> None:
        name = self.selected()
        downstream = self.ctx.engine.downstreams.get(name) if name else None
        if downstream is not None and downstream.log.path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(downstream.log.path)))
