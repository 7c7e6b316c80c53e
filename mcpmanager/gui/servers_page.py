"""The Servers page: the servers table with its toolbar and context menu, and the selected server's
detail (live stderr, facts, tools). Every action goes through `Control`; nothing here decides.

Problems are put where they are seen: until the user picks a row, the page selects the first server in
trouble (failed, or crashed and waiting to retry) and scrolls to it, so its reason and stderr are on
screen at start even when it is the last of many. The rows keep the config's order (rows that jump
as states change cannot be read), and once the user has picked a row the selection is theirs.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QPoint, QSize, QSortFilterProxyModel, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QIcon, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QMenu,
    QMessageBox,
    QSplitter,
    QStyle,
    QTableView,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui import style
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.server_detail import ServerDetail
from mcpmanager.gui.server_editor import ServerEditor
from mcpmanager.gui.servers_model import NAME, SORT_ROLE, STATE, TOOLS, ServersModel

_SP = QStyle.StandardPixmap
# The toolbar's icons: the style's own (a desktop's icon theme where it has one, Qt's otherwise).
# Enable and Disable share a button: its icon (a tick, a cross) follows its text.
_ICONS = {
    "add": _SP.SP_FileDialogNewFolder,
    "edit": _SP.SP_FileDialogDetailedView,
    "duplicate": _SP.SP_FileIcon,
    "remove": _SP.SP_TrashIcon,
    "start": _SP.SP_MediaPlay,
    "stop": _SP.SP_MediaStop,
    "restart": _SP.SP_BrowserReload,
    "enable": _SP.SP_DialogCancelButton,
    "log": _SP.SP_DialogOpenButton,
}
_ENABLE_ICON = _SP.SP_DialogApplyButton
_TROUBLE = (State.FAILED, State.BACKOFF, State.NEEDS_SIGN_IN)


class ServersPage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._picked = False  # the user chose a row: the page no longer moves the selection to problems
        self._moving = False  # the page itself is changing the selection
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
        self.toolbar = QToolBar()
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toolbar.setIconSize(QSize(16, 16))  # beside the text: the text's size, not a big toolbar's
        for key in ("add", "edit", "duplicate", "remove", None, "start", "stop", "restart", "enable", None, "log"):
            if key is None:
                self.toolbar.addSeparator()
            else:
                self.toolbar.addAction(self.commands[key])

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([350, 450])  # about a dozen servers at a glance, the detail below
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.toolbar)
        layout.addWidget(splitter, 1)

        ctx.signals.statusChanged.connect(self._status_changed)
        ctx.signals.serversChanged.connect(self._servers_changed)
        ctx.signals.catalogueChanged.connect(lambda: self.model.refresh(set(self.model.names)))
        if self.model.names:
            self._move_to(self.model.names[0])
        self._update_actions()

    # Selection ------------------------------------------------------------------------------------

    def selected(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.name_at(self.sorted.mapToSource(rows[0]).row()) if rows else None

    def select(self, name: str) -> None:
        """Show `name`, as the user's choice (a server just added or edited, a test): from now on the
        page keeps the selection where it is put."""
        self._picked = True
        self._move_to(name)

    def _move_to(self, name: str) -> None:
        row = self.model.row_of(name)
        if row < 0:
            return
        index = self.sorted.mapFromSource(self.model.index(row, 0))
        self._moving = True
        try:
            self.table.selectRow(index.row())
        finally:
            self._moving = False
        self.table.scrollTo(index)

    def _in_trouble(self, name: str) -> bool:
        """Failed, crashed, or retrying after a crash (which must not count as fixed)."""
        downstream = self.ctx.engine.downstreams.get(name)
        if downstream is None:
            return False
        status = downstream.status
        return status.state in _TROUBLE or (status.state is State.STARTING and status.restarts > 0)

    def _show_trouble(self) -> None:
        """Until the user picks a row: the worst server in trouble (failed before crashed, then the
        config's order), unless the one shown is in trouble itself."""
        current = self.selected()
        if self._picked or (current is not None and self._in_trouble(current)):
            return
        states = {name: d.status.state for name, d in self.ctx.engine.downstreams.items()}
        troubled = [name for name in self.model.names if states.get(name) in _TROUBLE]
        if troubled:
            self._move_to(max(troubled, key=lambda name: style.SEVERITY[states[name]]))  # max: the first of the worst

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        rows = self.table.selectionModel().selectedRows()
        if rows and not self._picked:
            self.table.scrollTo(rows[0])  # selected while hidden: the table had no size to scroll in

    def search_field(self) -> QLineEdit:
        """Where the window's Ctrl+F goes on this page: find in the selected server's stderr."""
        return self.detail.log_view.find_field

    def _selected(self, *_: QItemSelection) -> None:
        if not self._moving:
            self._picked = True  # a click, the keyboard: the user's choice
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
        self._show_trouble()
        self._update_actions()

    def _servers_changed(self) -> None:
        keep = self.selected()
        self.model.reload()
        if keep is not None and keep in self.model.names:
            self._move_to(keep)
        elif self.model.names and self.selected() is None:
            self._move_to(self.model.names[0])
        self.detail.show_server(self.selected())  # a changed server is a new Downstream: re-attach
        self._show_trouble()
        self._update_actions()

    # Actions --------------------------------------------------------------------------------------

    def _make_actions(self) -> dict[str, QAction]:
        Shortcut = QKeySequence | QKeySequence.StandardKey | str | None

        def action(text: str, slot: Callable[[], object], shortcut: Shortcut = None) -> QAction:
            made = QAction(text, self)
            made.setIconVisibleInMenu(False)  # the window's menus have no icons: the context menu neither
            made.triggered.connect(slot)
            if shortcut is not None:
                made.setShortcut(QKeySequence(shortcut))
                made.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(made)
            return made

        made = {
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
        for key, made_action in made.items():
            made_action.setIcon(self._icon(_ICONS[key]))
        self._enable_icons = {True: self._icon(_ENABLE_ICON), False: made["enable"].icon()}  # by `disabled`
        return made

    def _icon(self, which: QStyle.StandardPixmap) -> QIcon:
        return self.style().standardIcon(which, None, self)

    def _update_actions(self) -> None:
        name = self.selected()
        downstream = self.ctx.engine.downstreams.get(name) if name else None
        config = self.ctx.engine.config.servers.get(name) if name else None
        state = downstream.status.state if downstream is not None else None
        for key in ("edit", "duplicate", "remove", "enable", "log"):
            self.commands[key].setEnabled(config is not None)
        disabled = config is not None and config.disabled
        self.commands["enable"].setText("Enable" if disabled else "Disable")
        self.commands["enable"].setIcon(self._enable_icons[disabled])
        runnable = downstream is not None and not disabled
        self.commands["start"].setEnabled(
            runnable and state in (State.STOPPED, State.FAILED, State.BACKOFF, State.NEEDS_SIGN_IN)
        )
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
