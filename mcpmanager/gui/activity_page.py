"""The Activity page: a live table of the calls through the proxy, and "make alias" on a name that
needed repair or that nothing answered.

A non-modal chooser always asks which tool the name meant before anything is saved: a repair is a
guess, and an alias makes it permanent. A repaired name's tool comes first and preselected; an unknown
name's come the resolver's candidates; then the whole catalogue. Making the alias changes the config
file through `Control` (in the background, never a nested event loop); the engine applies it, and the
next call with that name resolves with how "alias".
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.gui.activity_model import (
    CALLED,
    DETAIL,
    ActivityFilter,
    ActivityModel,
    can_make_alias,
    records_of,
)
from mcpmanager.gui.context import GuiContext

KEY_ROLE = Qt.ItemDataRole.UserRole  # a chooser row's `server:tool`
_FOLLOW_SLACK = 2  # pixels from the bottom that still count as "at the newest row"


_WITHHELD = {"destructive": "closest, but it can destroy data", "another action": "closest, but does another thing"}


@dataclass(frozen=True)
class Candidates:
    tools: list[CatalogueTool]  # the resolver's candidates for the name first, then every other tool
    notes: dict[str, str]  # by key: why a tool is offered first
    withheld: str | None = None  # the key of a closest tool the resolver refused to guess: never preselected


def candidates(ctx: GuiContext, called: str, resolved: CallRecord | None = None) -> Candidates:
    """The tools `called` may mean, best first; `resolved`: the call whose repair gave it a tool."""
    resolution = ctx.engine.router.resolver.resolve(called)
    tools = ctx.engine.catalogue.tools()
    by_exposed = {t.exposed: t for t in tools}
    first: dict[str, CatalogueTool] = {}
    notes: dict[str, str] = {}
    if resolved is not None and resolved.server and resolved.tool:
        tool = ctx.engine.catalogue.find(resolved.server, resolved.tool)
        if tool is not None:
            first[tool.key], notes[tool.key] = tool, f"what it resolved to ({resolved.how})"
    for tool in resolution.ambiguous:
        first[tool.key], notes[tool.key] = tool, "one of the tools this name may mean"
    withheld = resolution.withheld
    if withheld is not None:
        first[withheld.key] = withheld
        notes[withheld.key] = _WITHHELD.get(resolution.withheld_why or "", "closest")
    for tool in (by_exposed[name] for name in resolution.suggestions if name in by_exposed):
        if tool.key not in first:
            first[tool.key], notes[tool.key] = tool, "suggested"
    rest = sorted((t for t in tools if t.key not in first), key=lambda t: t.exposed.lower())
    return Candidates([*first.values(), *rest], notes, withheld.key if withheld is not None else None)


class AliasChooser(QDialog):
    """Which tool did `called` mean? Non-modal: `chosen` carries the picked tool's `server:tool`."""

    chosen = Signal(str)

    def __init__(self, called: str, offered: Candidates, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.called = called
        self.withheld = offered.withheld
        self.setWindowTitle("Make alias")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.tools = QStandardItemModel(self)
        bold = QFont()
        bold.setBold(True)
        for tool in offered.tools:
            note = offered.notes.get(tool.key)
            item = QStandardItem(f"{tool.exposed}  [{tool.server}]" + (f"  — {note}" if note else ""))
            item.setData(tool.key, KEY_ROLE)
            item.setToolTip(tool.description)
            item.setEditable(False)
            if note:
                item.setFont(bold)
            self.tools.appendRow(item)
        self.shown = QSortFilterProxyModel(self)
        self.shown.setSourceModel(self.tools)
        self.shown.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tools")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.list = QListView()
        self.list.setModel(self.shown)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.doubleClicked.connect(lambda _index: self.accept())
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.selectionModel().selectionChanged.connect(self._enable)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Make <b>{html.escape(called)}</b> an alias of:"))
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        self.resize(460, 420)
        self._select_first()

    def selected_key(self) -> str | None:
        rows = self.list.selectionModel().selectedRows()
        return str(rows[0].data(KEY_ROLE)) if rows else None

    def accept(self) -> None:
        key = self.selected_key()
        if key is None:
            return
        super().accept()
        self.chosen.emit(key)

    def _filter(self, text: str) -> None:
        self.shown.setFilterFixedString(text)
        self._select_first()

    def _select_first(self) -> None:
        """Preselect the best guess, unless it is one the resolver would not take on its own."""
        first = self.shown.index(0, 0)
        if first.isValid() and first.data(KEY_ROLE) != self.withheld and not self.list.selectionModel().selectedRows():
            self.list.setCurrentIndex(first)
        self._enable()

    def _enable(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(self.selected_key() is not None)


class ActivityPage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.model = ActivityModel(ctx.engine.router.activity, ctx.signals, self)
        self.proxy = ActivityFilter(self)
        self.proxy.setSourceModel(self.model)
        self.chooser: AliasChooser | None = None

        self.view = QTableView()
        self.view.setModel(self.proxy)
        # The calls' own order until a header is clicked (no sort column: the source's order).
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 6)  # log-dense rows
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in zip(range(DETAIL), (70, 150, 70, 170, 200, 75, 70, 170), strict=True):
            header.resizeSection(column, width)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.view.selectionModel().selectionChanged.connect(self._selection_changed)
        # A selected call may move on (pending → unknown) or go (Clear view resets without a signal).
        self.proxy.dataChanged.connect(self._selection_changed)
        self.proxy.modelReset.connect(self._selection_changed)

        self.alias_button = QPushButton("Make alias…")
        self.alias_button.setToolTip(
            "Make the name as called an alias of a tool you choose (the one it resolved to first)"
        )
        self.alias_button.clicked.connect(lambda: self.make_alias())
        self.clear_button = QPushButton("Clear view")
        self.clear_button.setToolTip("Empty this table (the engine's activity log is kept)")
        self.clear_button.clicked.connect(self.model.clear)
        self.only_repaired = QCheckBox("Only resolved or failed")
        self.only_repaired.toggled.connect(self.proxy.set_only_repaired)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.message = QLabel()
        self.message.setWordWrap(True)

        tools = QHBoxLayout()
        tools.addWidget(self.filter, 1)
        tools.addWidget(self.only_repaired)
        tools.addWidget(self.alias_button)
        tools.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.addLayout(tools)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.message)

        # Follow the newest row unless the user scrolled away: a range change (rows came) keeps the
        # bar at the bottom only if it was there.
        self.follow = True
        bar = self.view.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        self._selection_changed()

    def search_field(self) -> QLineEdit:
        """Where the window's Ctrl+F goes on this page."""
        return self.filter

    def _scrolled(self, value: int) -> None:
        self.follow = value >= self.view.verticalScrollBar().maximum() - _FOLLOW_SLACK

    def _range_changed(self, _low: int, high: int) -> None:
        if self.follow:
            self.view.verticalScrollBar().setValue(high)

    # Selection ------------------------------------------------------------------------------------

    def selected_record(self) -> CallRecord | None:
        rows = [index.row() for index in self.view.selectionModel().selectedRows()]
        found = records_of(self.proxy, rows)
        if not found:
            return None
        # The row's record may have moved on since it was selected; show the latest.
        newest = self.model.record_at(self.model.row_of(found[0].id))
        return newest or found[0]

    def select_call(self, record_id: int) -> bool:
        """Select the row of call `record_id` (tests and other pages use it)."""
        row = self.model.row_of(record_id)
        if row < 0:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, CALLED))
        if not index.isValid():
            return False
        self.view.selectRow(index.row())
        return True

    def _selection_changed(self, *_: object) -> None:
        record = self.selected_record()
        self.alias_button.setEnabled(record is not None and can_make_alias(record))

    def _context_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():
            return
        self.view.selectRow(index.row())
        record = self.selected_record()
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one per right-click: do not pile up
        alias = QAction("Make alias…", menu)
        alias.setEnabled(record is not None and can_make_alias(record))
        alias.triggered.connect(lambda: self.make_alias(record))
        menu.addAction(alias)
        menu.popup(self.view.viewport().mapToGlobal(position))  # popup, not exec: no nested loop

    # Make alias -------------------------------------------------------------------------------------

    def make_alias(self, record: CallRecord | None = None) -> None:
        """Ask which tool the called name meant (the one it resolved to first), then alias it."""
        record = record or self.selected_record()
        if record is None or not can_make_alias(record):
            return
        offered = candidates(self.ctx, record.called, record if record.outcome != "unknown" else None)
        if self.chooser is not None:
            self.chooser.close()
        self.chooser = AliasChooser(record.called, offered, self)
        chooser = self.chooser
        chooser.chosen.connect(lambda key: self.alias_to(key, chooser.called))
        chooser.finished.connect(lambda _result: self._chooser_done(chooser))
        chooser.open()  # non-modal for the event loop: open(), never exec()

    def alias_to(self, key: str, called: str) -> None:
        server, _, name = key.partition(":")
        tool = self.ctx.engine.catalogue.find(server, name)
        if tool is None:
            self.ctx.errors.report(f"Could not make {called!r} an alias: {key} is no longer in the catalogue")
            return
        if called in tool.aliases:
            self.message.setText(f"{called!r} is already an alias of {tool.exposed} [{server}].")
            return
        self.message.setText(f"Making {called!r} an alias of {tool.exposed} [{server}]…")
        self.ctx.run(self._save_alias(key, called, tool.exposed), f"make {called!r} an alias of {key}")

    async def _save_alias(self, key: str, called: str, exposed: str) -> None:
        try:
            await self.ctx.control.add_alias(key, called)
        except Exception:
            self.message.setText("")  # ctx.run shows why in the error bar
            raise
        self.message.setText(f"{called!r} is now an alias of {exposed} [{key.partition(':')[0]}].")

    def _chooser_done(self, chooser: AliasChooser) -> None:
        if self.chooser is chooser:
            self.chooser = None
