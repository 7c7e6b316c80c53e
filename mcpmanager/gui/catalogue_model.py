"""The catalogue table: one row per tool of every enabled server (disabled tools included, dimmed),
then each prompt, resource and resource template the servers offer (`catalogue_offers`).

The model never decides: it shows what the engine's catalogue and offerings say and sends changes
through a `ChangeTool` callable (in the window: `Control.set_tool` run by `GuiContext.run`). A toggled
checkbox flips when the engine has applied the change, not before; a refused change leaves it as it
was. Only tools have settings: prompts and resources have no checkboxes, aliases or token sizes.

Built for 20,000 tools: everything a row shows or is searched by is computed once per change of
that row (`catalogue_rows`), the filter (`catalogue_filter`) tests a precomputed casefolded haystack
per row in bulk, and sorting happens here in Python once per click rather than in the proxy, whose
default `lessThan` would call back into Python twice per comparison (about a million calls for
20,000 rows).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from shiboken6 import isValid

from mcpmanager.core.catalogue.catalogue import ToolEntry
from mcpmanager.gui.approval_choice import ApprovalValue
from mcpmanager.gui.catalogue_offers import PROMPT, RESOURCE, TEMPLATE, Offer, offers_of
from mcpmanager.gui.catalogue_rows import (
    ALIASES,
    ALWAYS_ON,
    DESCRIPTION,
    ENABLED,
    HEADER_TIPS,
    HEADERS,
    KIND,
    NAME,
    SERVER,
    TOKENS,
    Item,
    Row,
    make_row,
    same,
    sort_key,
    tokens,
    tooltip,
)
from mcpmanager.gui.context import GuiContext

# The columns are `catalogue_rows`'s, offered here too, beside the roles, for the model's users.
__all__ = [
    "ALIASES",
    "ALWAYS_ON",
    "DESCRIPTION",
    "ENABLED",
    "HEADERS",
    "KEY_ROLE",
    "KIND",
    "NAME",
    "SERVER",
    "SORT_ROLE",
    "TOKENS",
    "CatalogueModel",
    "ChangeTool",
    "ToolChange",
    "check_state",
]

Index = QModelIndex | QPersistentModelIndex
SORT_ROLE = Qt.ItemDataRole.UserRole
KEY_ROLE = Qt.ItemDataRole.UserRole + 1  # the row's key: a tool's `server:name`, an offer's `Offer.key`
_MAX_PAUSE_MS = 2000
# The Kind column's colour for what is not a tool: the few prompts and resources stand out among
# thousands of tools. Mid tones that read on light and dark backgrounds alike.
_KIND_COLOURS = {PROMPT: QColor("#8250df"), RESOURCE: QColor("#0969da"), TEMPLATE: QColor("#0969da")}

# data() runs for every role of every visible cell on each repaint: compare plain ints.
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_CHECK = int(Qt.ItemDataRole.CheckStateRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
_SORT = int(SORT_ROLE)
_KEY = int(KEY_ROLE)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_CHECKABLE = (ALWAYS_ON, ENABLED)


class ToolChange(TypedDict, total=False):
    """The keyword arguments of `Control.set_tool`."""

    always_on: bool
    disabled: bool
    aliases: list[str]
    params: dict[str, str]
    approval: ApprovalValue


# (key, change, what the user was doing) → the running change, or None if nothing was started.
ChangeTool = Callable[[str, ToolChange, str], "asyncio.Future[None] | None"]


class CatalogueModel(QAbstractTableModel):
    """Rows in catalogue order (tools, then prompts, resources and templates) until a column is
    sorted (`sort(-1)` restores that order)."""

    def __init__(
        self,
        entries: Callable[[], Sequence[ToolEntry]],
        change: ChangeTool | None = None,
        parent: QObject | None = None,
        offers: Callable[[], Sequence[Offer]] = tuple,
    ) -> None:
        super().__init__(parent)
        self._entries = entries
        self._offers = offers
        self._change = change
        self._rows: list[Row] = []
        self._row_of: dict[str, int] = {}
        self._order: dict[str, int] = {}  # catalogue order, to sort ties and to unsort
        self._sorted: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        # Bumped whenever rows move or what the filter searches changes: the filter's cue to recompute.
        self.revision = 0
        self._haystacks: tuple[int, list[str]] = (-1, [])
        self._kinds: tuple[int, list[str]] = (-1, [])
        self._kind_counts: dict[str, int] = {}
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.timeout.connect(self.refresh)
        self._refresh_ms = 0.0
        self._load(self._fresh_items())

    @classmethod
    def for_context(cls, ctx: GuiContext, parent: QObject | None = None) -> CatalogueModel:
        """The window's model: the engine's catalogue and offerings, changed through `Control`,
        following the engine signals."""

        def change(key: str, change: ToolChange, doing: str) -> asyncio.Future[None]:
            return ctx.run(ctx.control.set_tool(key, **change), doing)

        offerings = ctx.engine.offerings
        model = cls(ctx.engine.catalogue.entries, change, parent, offers=lambda: offers_of(offerings))
        ctx.signals.catalogueChanged.connect(model.refresh_soon)
        ctx.signals.offersChanged.connect(model.refresh_soon)
        return model

    # Reading ---------------------------------------------------------------------------------------

    def entry(self, row: int) -> ToolEntry | None:
        """The tool of `row`; None for a prompt or resource (see `offer`) or no row."""
        return self._rows[row].entry if 0 <= row < len(self._rows) else None

    def offer(self, row: int) -> Offer | None:
        """The prompt, resource or template of `row`; None for a tool or no row."""
        return self._rows[row].offer if 0 <= row < len(self._rows) else None

    def key(self, row: int) -> str | None:
        return self._rows[row].key if 0 <= row < len(self._rows) else None

    def shown_name(self, row: int) -> str:
        return self._rows[row].shown

    def tokens(self, row: int) -> int:
        return tokens(self._rows[row])

    def row_of(self, key: str) -> int:
        return self._row_of.get(key, -1)

    def haystacks(self) -> list[str]:
        """What the filter searches, one casefolded string per row (in row order)."""
        if self._haystacks[0] != self.revision:
            self._haystacks = (self.revision, [row.haystack for row in self._rows])
        return self._haystacks[1]

    def kinds(self) -> list[str]:
        """Each row's kind (`catalogue_offers.KINDS`), in row order."""
        self._count_kinds()
        return self._kinds[1]

    def kind_counts(self) -> dict[str, int]:
        """How many rows of each kind (asked on every keystroke: counted once per change)."""
        self._count_kinds()
        return self._kind_counts

    def _count_kinds(self) -> None:
        if self._kinds[0] != self.revision:
            kinds = [row.kind for row in self._rows]
            self._kinds = (self.revision, kinds)
            self._kind_counts = {kind: kinds.count(kind) for kind in set(kinds)}

    # Changing --------------------------------------------------------------------------------------

    def change_tool(self, key: str, change: ToolChange, doing: str) -> asyncio.Future[None] | None:
        """Ask for a change; the rows follow once the engine has it (or stay, if it was refused)."""
        if self._change is None:
            return None
        running = self._change(key, change, doing)
        if running is not None:
            # Re-read at once when done rather than waiting for the batched engine signal; the model
            # may be gone by then (the window closed).
            running.add_done_callback(lambda _: self.refresh() if isValid(self) else None)
        return running

    def refresh_soon(self) -> None:
        """Refresh after a pause three times as long as the last refresh took: at 20,000 tools one
        takes ~0.2 s, and a server relisting in a loop must not keep the window busy most of the time."""
        if not self._soon.isActive():
            self._soon.start(min(_MAX_PAUSE_MS, round(3 * self._refresh_ms)))

    def refresh(self) -> None:
        """Re-read the engine's catalogue: the same rows → repaint only the rows that changed; rows
        came or went → one reset (views keep their selection by key: see `CataloguePage`)."""
        self._soon.stop()
        start = time.perf_counter()
        try:
            self._refresh()
        finally:
            self._refresh_ms = (time.perf_counter() - start) * 1000

    def _refresh(self) -> None:
        items = self._fresh_items()
        if items.keys() != self._row_of.keys() or (
            # Unsorted rows follow the catalogue's order: servers reordered in the config move them all.
            self._sorted[0] < 0 and any(k != r.key for k, r in zip(items, self._rows, strict=True))
        ):
            self.beginResetModel()
            self._load(items)
            self.endResetModel()
            return
        self._order = {key: i for i, key in enumerate(items)}
        changed: list[int] = []
        searched = False
        for key, item in items.items():
            row = self._row_of[key]
            old = self._rows[row]
            if not same(_item(old), item):
                new = make_row(key, item, old)
                searched = searched or new.haystack != old.haystack
                self._rows[row] = new
                changed.append(row)
        if searched:
            self.revision += 1
        last = self.columnCount() - 1
        for first, end in _runs(sorted(changed)):
            self.dataChanged.emit(self.index(first, 0), self.index(end, last))

    def _fresh_items(self) -> dict[str, Item]:
        """The catalogue's tools and then the offers, by key, in order. A server may list two tools
        under one name, which the config cannot tell apart either: the first one stands."""
        found: dict[str, Item] = {}
        for entry in self._entries():
            found.setdefault(entry.key, entry)
        for offer in self._offers():
            found.setdefault(offer.key, offer)
        return found

    def _load(self, items: dict[str, Item]) -> None:
        previous = {row.key: row for row in self._rows}
        self._order = {key: i for i, key in enumerate(items)}
        self._rows = [make_row(key, item, previous.get(key)) for key, item in items.items()]
        self._arrange(*self._sorted)

    def _arrange(self, column: int, order: Qt.SortOrder) -> None:
        """Rows in catalogue order, then stably sorted by `column` (ties keep that order)."""
        self._rows.sort(key=lambda r: self._order[r.key])
        if 0 <= column < len(HEADERS):
            self._rows.sort(key=sort_key(column), reverse=order == Qt.SortOrder.DescendingOrder)
        self._row_of = {row.key: i for i, row in enumerate(self._rows)}
        self.revision += 1

    # Qt's model interface --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's name and default)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == _DISPLAY:
            return HEADERS[section]
        if role == _TOOLTIP:
            return HEADER_TIPS[section]
        if role == _ALIGN and section == TOKENS:
            return _RIGHT
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
        if index.column() in _CHECKABLE and self._rows[index.row()].entry is not None:
            flags |= Qt.ItemFlag.ItemIsUserCheckable  # tool settings: nothing to toggle for a prompt
        return flags

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        r = index.row()
        if not index.isValid() or not 0 <= r < len(self._rows):
            return None
        row = self._rows[r]
        column = index.column()
        if role == _DISPLAY:
            if column == NAME:
                return row.shown
            if column == KIND:
                return row.kind
            if column == SERVER:
                return row.server
            if column == DESCRIPTION:
                return row.line
            if column == ALIASES:
                return row.aliases
            if column == TOKENS:
                return f"{tokens(row):,}" if row.entry is not None else ""
            return None
        if role == _CHECK:
            if row.entry is None:
                return None  # no check box drawn at all
            if column == ALWAYS_ON:
                return check_state(row.always_on)
            if column == ENABLED:
                return check_state(row.enabled)
            return None
        if role == _FOREGROUND:
            if not row.enabled:
                return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
            if column == KIND:
                return _KIND_COLOURS.get(row.kind)
            return None
        if role == _FONT:
            if column == NAME and not row.enabled:
                font = QFont()
                font.setItalic(True)
                return font
            return None
        if role == _ALIGN:
            return _RIGHT if column == TOKENS else None
        if role == _TOOLTIP:
            return tooltip(row, column)
        if role == _SORT:
            return sort_key(column)(row)
        if role == _KEY:
            return row.key
        return None

    def setData(self, index: Index, value: Any, role: int = int(Qt.ItemDataRole.EditRole)) -> bool:
        if role != _CHECK or not index.isValid() or index.column() not in _CHECKABLE:
            return False
        row = self._rows[index.row()]
        if row.entry is None:
            return False
        on = _checked(value)
        name, key = row.shown, row.key
        if index.column() == ALWAYS_ON:
            if on == row.always_on:
                return False
            doing = f"make {name} always on" if on else f"make {name} no longer always on"
            started = self.change_tool(key, {"always_on": on}, doing)
        else:
            if on == row.enabled:
                return False
            started = self.change_tool(key, {"disabled": not on}, f"{'enable' if on else 'disable'} {name}")
        # The cell changes when the engine has the change (refresh), so no dataChanged here.
        return started is not None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows themselves; -1 restores the catalogue's order. A later refresh keeps rows
        where they are (a row must not jump away from under the pointer that just toggled it)."""
        self._sorted = (column, order)
        self.layoutAboutToBeChanged.emit()  # (an empty parents list with a hint crashes PySide 6.11)
        before = self.persistentIndexList()
        keys = [self._rows[i.row()].key for i in before]
        self._arrange(column, order)
        after = [self.index(self._row_of[key], i.column()) for key, i in zip(keys, before, strict=True)]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()


def check_state(on: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if on else Qt.CheckState.Unchecked


def _checked(value: Any) -> bool:
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    return int(value) == int(Qt.CheckState.Checked.value)


def _item(row: Row) -> Item:
    item = row.entry if row.entry is not None else row.offer
    assert item is not None, "a row holds a tool or an offer"
    return item


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as contiguous (first, last) runs: one dataChanged per run."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
