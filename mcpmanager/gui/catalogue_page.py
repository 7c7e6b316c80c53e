"""The Catalogue page: every tool of every server in one table, filtered as the user types, and the
selected tool's detail below it (schema, annotations, call template, aliases).

Keyboard first: Ctrl+F (or just typing into the field) filters, Down moves into the table, Space
toggles the current checkbox, Esc clears the filter. Nothing here decides or saves by itself: changes
go through the model to `Control`, and failures reach the error bar through `GuiContext.run`.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.gui.catalogue_detail import ToolDetail
from mcpmanager.gui.catalogue_filter import CatalogueFilter
from mcpmanager.gui.catalogue_model import (
    ALIASES,
    ALWAYS_ON,
    DESCRIPTION,
    ENABLED,
    NAME,
    SERVER,
    TOKENS,
    CatalogueModel,
    check_state,
)
from mcpmanager.gui.context import GuiContext

# Starting widths (the user may drag them); Description takes what is left. Never ResizeToContents:
# it measures every one of 20,000 rows on each change.
_WIDTHS = {NAME: 240, SERVER: 130, ALWAYS_ON: 76, ENABLED: 66, ALIASES: 110, TOKENS: 64}


class FilterField(QLineEdit):
    """The filter: Esc clears it (or, when empty, goes on to the window); Down moves into the table."""

    def __init__(self, table: QTableView) -> None:
        super().__init__()
        self._table = table
        self.setPlaceholderText("Filter by name, description or server  (Ctrl+F)")
        self.setClearButtonEnabled(True)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Escape and self.text():
            self.clear()
            event.accept()
            return
        if key in (Qt.Key.Key_Down, Qt.Key.Key_PageDown) and self._table.model().rowCount() > 0:
            self._table.setFocus()
            if not self._table.currentIndex().isValid():
                self._table.selectRow(0)
            event.accept()
            return
        super().keyPressEvent(event)


class CataloguePage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.model = CatalogueModel.for_context(ctx, self)
        self.rows = CatalogueFilter(self)
        self.rows.setSourceModel(self.model)
        self.table = self._make_table()
        self.filter = FilterField(self.table)
        # Keystrokes that queue up while a filter runs are taken together: one filter per batch.
        self._filtering = QTimer(self)
        self._filtering.setSingleShot(True)
        self._filtering.setInterval(0)
        self._filtering.timeout.connect(self._apply_filter)
        self.filter.textChanged.connect(lambda _text: self._filtering.start())
        self.count = QLabel()
        self.count.setObjectName("catalogueCount")
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # Wide enough for any count: a label that grows while typing would re-lay out the row each time.
        self.count.setMinimumWidth(self.count.fontMetrics().horizontalAdvance("000,000 of 000,000 tools"))
        self.detail = ToolDetail(self.model)
        self._key: str | None = None  # the selected tool, kept across reloads and filtering
        self.context_menu: QMenu | None = None

        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.count)
        # The detail goes under the table: seven columns need the page's whole width.
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([440, 300])  # proportions: the first layout scales them to the page
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self._focus_filter)
        self.model.modelReset.connect(self._reloaded)
        self.model.dataChanged.connect(self._changed)
        for signal in (self.rows.layoutChanged, self.rows.modelReset, self.rows.rowsInserted, self.rows.rowsRemoved):
            signal.connect(self._update_count)
        self._update_count()

    def _make_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.rows)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = table.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform heights: no per-row measuring
        rows.setDefaultSectionSize(table.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        for column, width in _WIDTHS.items():
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            table.setColumnWidth(column, width)
        header.setSectionResizeMode(DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        # Catalogue order until a header is clicked; a third click goes back to it.
        header.setSortIndicatorClearable(True)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        table.setSortingEnabled(True)
        table.selectionModel().currentRowChanged.connect(self._current_changed)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._context_menu)
        return table

    # Filtering -------------------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        """Type `text` into the filter field and filter at once."""
        self.filter.setText(text)
        self._apply_filter()

    def _apply_filter(self) -> None:
        self._filtering.stop()
        if self.rows.set_query(self.filter.text()):
            # The selected tool, back in sight when it matches again (erasing); else the best matches.
            if not self.table.currentIndex().isValid() and self._key is not None:
                self.select_key(self._key)
            if self.table.currentIndex().isValid():
                self.table.scrollTo(self.table.currentIndex())
            else:
                self.table.scrollToTop()
        self._update_count()

    def _focus_filter(self) -> None:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()

    def _update_count(self) -> None:
        shown, total = self.rows.rowCount(), self.model.rowCount()
        noun = "tool" if total == 1 else "tools"
        self.count.setText(f"{shown:,} of {total:,} {noun}" if self.rows.words else f"{total:,} {noun}")

    # Selection -------------------------------------------------------------------------------------

    def selected_key(self) -> str | None:
        return self._key

    def select_key(self, key: str) -> bool:
        """Select a tool by `server:name`; False if it is not in the table or filtered out."""
        row = self.model.row_of(key)
        index = self.rows.mapFromSource(self.model.index(row, NAME)) if row >= 0 else QModelIndex()
        if not index.isValid():
            return False
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        return True

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return  # filtered out or cleared: the detail keeps the last tool (calmer while typing)
        row = self.rows.mapToSource(current).row()
        entry = self.model.entry(row)
        self._key = entry.key if entry else None
        self.detail.show_row(row)

    def _context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        entry = self.model.entry(self.rows.mapToSource(index).row()) if index.isValid() else None
        if entry is None:
            return
        row = self.model.row_of(entry.key)
        name = self.model.shown_name(row)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(f"Copy “{name}”", lambda: QGuiApplication.clipboard().setText(name))
        menu.addSeparator()
        for column, title in ((ALWAYS_ON, "Always on"), (ENABLED, "Enabled")):
            action = menu.addAction(title)
            action.setCheckable(True)
            action.setChecked(
                self.model.index(row, column).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
            )
            action.toggled.connect(partial(self._toggle, entry.key, column))
        self.context_menu = menu  # for tests; the menu deletes itself when closed
        menu.popup(self.table.viewport().mapToGlobal(position))  # not exec(): no nested event loop (qasync)

    def _toggle(self, key: str, column: int, on: bool) -> None:
        row = self.model.row_of(key)  # looked up again: the rows may have moved while the menu was open
        if row >= 0:
            self.model.setData(self.model.index(row, column), check_state(on), Qt.ItemDataRole.CheckStateRole)

    def _reloaded(self) -> None:
        """Tools came or went (a bulk reload): select the same tool again, wherever it is now."""
        if self._key is None:
            return
        if not self.select_key(self._key):
            row = self.model.row_of(self._key)
            self.detail.show_row(row if row >= 0 else None)

    def _changed(self, first: QModelIndex, last: QModelIndex) -> None:
        row = self.model.row_of(self._key) if self._key else -1
        if first.row() <= row <= last.row():
            self.detail.show_row(row)
