"""The Catalogue page: every tool, prompt, resource and resource template of every server in one
table, filtered as the user types and by kind, and the selected row's detail below it (a tool's
schema, annotations, call template and aliases; a prompt's arguments; a resource's URI).

Keyboard first: Ctrl+F (the window's, see `main_window`) or just typing into the field filters,
Down moves into the table, Space toggles the current checkbox, Esc clears the filter, Alt+A/T/P/R
show all, tools, prompts or resources. Nothing here decides or saves by itself: changes go through
the model to `Control`, and failures reach the error bar through `GuiContext.run`.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTableView,
    QToolButton,
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
    KIND,
    NAME,
    SERVER,
    TOKENS,
    CatalogueModel,
    check_state,
)
from mcpmanager.gui.catalogue_offer_detail import OfferDetail
from mcpmanager.gui.catalogue_offers import GROUPS, SINGULAR
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.learned_view import LearnedPanel, SuggestionBar, learned_text

# Starting widths (the user may drag them); Description takes what is left. Never ResizeToContents:
# it measures every one of 20,000 rows on each change.
_WIDTHS = {NAME: 240, KIND: 70, SERVER: 130, ALWAYS_ON: 76, ENABLED: 66, ALIASES: 110, TOKENS: 64}
_GROUP_TITLES = {None: "&All", "tools": "&Tools", "prompts": "&Prompts", "resources": "&Resources"}


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
        self.count.setMinimumWidth(self.count.fontMetrics().horizontalAdvance("000,000 of 000,000 resources"))
        self.kind_buttons = self._make_kind_buttons()
        store = ctx.engine.router.learning.store
        self.detail = ToolDetail(
            self.model, lambda: ctx.engine.config.proxy, lambda k: learned_text(store.entries(), k)
        )
        self.offer_detail = OfferDetail()
        self.details = QStackedWidget()  # the tool's detail (or the hint to pick a row), or the offer's
        self.details.addWidget(self.detail)
        self.details.addWidget(self.offer_detail)
        self._key: str | None = None  # the selected row, kept across reloads and filtering
        self.context_menu: QMenu | None = None
        # Learning from use: the pairs (shown with the Learned button) and the always-on suggestions.
        self.learned = LearnedPanel(ctx)
        self.learned.hide()
        self.learned.refreshed.connect(self._learned_changed)
        self.learned_button = QToolButton()
        self.learned_button.setText("&Learned")
        self.learned_button.setCheckable(True)
        self.learned_button.setAutoRaise(True)
        self.learned_button.setToolTip("What discovery learned from your clients' calls: query → tool, and Forget")
        self.learned_button.toggled.connect(self._show_learned)
        self.suggestions = SuggestionBar(ctx)

        top = QHBoxLayout()
        for button in self.kind_buttons.values():
            top.addWidget(button)
        top.addWidget(self.filter, 1)
        top.addWidget(self.count)
        top.addWidget(self.learned_button)
        # The detail goes under the table: eight columns need the page's whole width.
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.addWidget(self.learned)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setStretchFactor(2, 2)
        splitter.setSizes([440, 300])  # proportions: the first layout scales them to the page
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.suggestions)
        layout.addWidget(splitter, 1)

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

    def _make_kind_buttons(self) -> dict[str | None, QToolButton]:
        """All / Tools / Prompts / Resources, each with its count: what the servers offer at a glance."""
        group = QButtonGroup(self)
        buttons: dict[str | None, QToolButton] = {}
        for kind, title in _GROUP_TITLES.items():
            button = QToolButton()
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setProperty("title", title)
            button.setChecked(kind is None)
            button.toggled.connect(partial(self._kind_toggled, kind))
            group.addButton(button)
            buttons[kind] = button
        buttons[None].setToolTip("Show every tool, prompt, resource and resource template")
        buttons["tools"].setToolTip("Show tools only")
        buttons["prompts"].setToolTip("Show prompts only: messages a client's user can pick (prompts/get)")
        buttons["resources"].setToolTip("Show resources and resource templates only: data a client can read")
        return buttons

    def _learned_changed(self) -> None:
        row = self.model.row_of(self._key) if self._key else -1
        if row >= 0 and self.model.entry(row) is not None:
            self.detail.show_row(row)  # its "Learned from use" line

    def _show_learned(self, on: bool) -> None:
        """Show or hide what was learned, under the detail: a third of the height when shown (a
        splitter gives a widget shown late no room at all)."""
        self.learned.setVisible(on)
        if on:
            table, detail, _ = self.splitter.sizes()
            total = table + detail
            self.splitter.setSizes([total * 4 // 9, total * 2 // 9, total // 3])

    # Filtering -------------------------------------------------------------------------------------

    def set_kind(self, kind: str | None) -> None:
        """Show only tools, prompts or resources (`catalogue_offers.GROUPS`), or everything (None)."""
        self.kind_buttons[kind].setChecked(True)

    def kind(self) -> str | None:
        return next(k for k, button in self.kind_buttons.items() if button.isChecked())

    def _kind_toggled(self, kind: str | None, on: bool) -> None:
        if on and self.rows.set_kinds(GROUPS[kind] if kind is not None else None):
            self._after_filter()
        self._update_count()

    def search_field(self) -> QLineEdit:
        """Where the window's Ctrl+F goes on this page."""
        return self.filter

    def set_filter(self, text: str) -> None:
        """Type `text` into the filter field and filter at once."""
        self.filter.setText(text)
        self._apply_filter()

    def _apply_filter(self) -> None:
        self._filtering.stop()
        if self.rows.set_query(self.filter.text()):
            self._after_filter()
        self._update_count()

    def _after_filter(self) -> None:
        # The selected row, back in sight when it matches again (erasing); else the best matches.
        if not self.table.currentIndex().isValid() and self._key is not None:
            self.select_key(self._key)
        if self.table.currentIndex().isValid():
            self.table.scrollTo(self.table.currentIndex())
        else:
            self.table.scrollToTop()

    def _update_count(self) -> None:
        counts = self.model.kind_counts()
        for kind, button in self.kind_buttons.items():
            number = sum(counts.get(k, 0) for k in GROUPS[kind]) if kind is not None else self.model.rowCount()
            button.setText(f"{button.property('title')} {number:,}")
            button.setEnabled(number > 0 or button.isChecked())  # nothing of a kind: nothing to show
        kind = self.kind()
        shown = self.rows.rowCount()
        if kind is None:
            total = self.model.rowCount()
            noun = "tool" if set(counts) <= {"tool"} else "item"  # only tools: say so, as before prompts
        else:
            total = sum(counts.get(k, 0) for k in GROUPS[kind])
            noun = SINGULAR[kind]
        noun += "" if total == 1 else "s"
        self.count.setText(f"{shown:,} of {total:,} {noun}" if self.rows.words else f"{total:,} {noun}")

    # Selection -------------------------------------------------------------------------------------

    def selected_key(self) -> str | None:
        return self._key

    def select_key(self, key: str) -> bool:
        """Select a row by its key (a tool's `server:name`, an `Offer.key`); False if it is not in
        the table or filtered out."""
        row = self.model.row_of(key)
        index = self.rows.mapFromSource(self.model.index(row, NAME)) if row >= 0 else QModelIndex()
        if not index.isValid():
            return False
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        return True

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return  # filtered out or cleared: the detail keeps the last row (calmer while typing)
        row = self.rows.mapToSource(current).row()
        self._key = self.model.key(row)
        self._show_detail(row)

    def _show_detail(self, row: int | None) -> None:
        offer = self.model.offer(row) if row is not None else None
        if offer is not None:
            self.offer_detail.show_offer(offer)
            self.details.setCurrentWidget(self.offer_detail)
        else:
            self.detail.show_row(row)  # a tool, or (None) the hint to pick a row
            self.details.setCurrentWidget(self.detail)

    def _context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        key = self.model.key(self.rows.mapToSource(index).row()) if index.isValid() else None
        if key is None:
            return
        row = self.model.row_of(key)
        name = self.model.shown_name(row)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(f"Copy “{name}”", lambda: QGuiApplication.clipboard().setText(name))
        self.context_menu = menu  # for tests; the menu deletes itself when closed
        if self.model.entry(row) is not None:
            self._add_tool_actions(menu, key, row)
        menu.popup(self.table.viewport().mapToGlobal(position))  # not exec(): no nested event loop (qasync)

    def _add_tool_actions(self, menu: QMenu, key: str, row: int) -> None:
        menu.addSeparator()
        for column, title in ((ALWAYS_ON, "Always on"), (ENABLED, "Enabled")):
            action = menu.addAction(title)
            action.setCheckable(True)
            action.setChecked(
                self.model.index(row, column).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
            )
            action.toggled.connect(partial(self._toggle, key, column))

    def _toggle(self, key: str, column: int, on: bool) -> None:
        row = self.model.row_of(key)  # looked up again: the rows may have moved while the menu was open
        if row >= 0:
            self.model.setData(self.model.index(row, column), check_state(on), Qt.ItemDataRole.CheckStateRole)

    def _reloaded(self) -> None:
        """Rows came or went (a bulk reload): select the same row again, wherever it is now."""
        if self._key is None:
            return
        if not self.select_key(self._key):
            row = self.model.row_of(self._key)
            self._show_detail(row if row >= 0 else None)

    def _changed(self, first: QModelIndex, last: QModelIndex) -> None:
        row = self.model.row_of(self._key) if self._key else -1
        if first.row() <= row <= last.row():
            self._show_detail(row)
