"""The catalogue table: one row per tool of every enabled server (disabled tools included, dimmed).

The model never decides: it shows what the engine's catalogue says and sends changes through a
`ChangeTool` callable (in the window: `Control.set_tool` run by `GuiContext.run`). A toggled checkbox
flips when the engine has applied the change, not before; a refused change leaves it as it was.

Built for 20,000 tools: everything a row shows or is searched by is computed once per change of
that tool (token sizes lazily, when a row is first shown or sorted by them), the filter
(`catalogue_filter`) tests a precomputed casefolded haystack per row in bulk, and sorting happens here
in Python once per click rather than in the proxy, whose default `lessThan` would call back into
Python twice per comparison (about a million calls for 20,000 rows).
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from shiboken6 import isValid

from mcpmanager.core.catalogue.catalogue import ToolEntry
from mcpmanager.core.proxy.token_count import tool_tokens
from mcpmanager.gui.context import GuiContext

Index = QModelIndex | QPersistentModelIndex
NAME, SERVER, DESCRIPTION, ALWAYS_ON, ENABLED, ALIASES, TOKENS = range(7)
HEADERS = ("Name", "Server", "Description", "Always on", "Enabled", "Aliases", "Tokens")
HEADER_TIPS = (
    "The name clients call it by (a disabled tool shows its server's own name)",
    "The server that provides it",
    "The first line of its description (hover for all of it)",
    "Listed to clients at once, without a search (discovery mode)",
    "Offered to clients at all",
    "Other names that call it",
    "Estimated tokens it costs in a client's tools/list",
)
SORT_ROLE = Qt.ItemDataRole.UserRole
KEY_ROLE = Qt.ItemDataRole.UserRole + 1  # the tool's `server:name`
_MAX_PAUSE_MS = 2000
_DESCRIPTION_CHARS = 240  # a longer first line is only elided when painted, at a cost per paint

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


class ToolChange(TypedDict, total=False):
    """The keyword arguments of `Control.set_tool`."""

    always_on: bool
    disabled: bool
    aliases: list[str]
    params: dict[str, str]


# (key, change, what the user was doing) → the running change, or None if nothing was started.
ChangeTool = Callable[[str, ToolChange, str], "asyncio.Future[None] | None"]


@dataclass(slots=True)
class _Row:
    key: str
    entry: ToolEntry
    shown: str  # the exposed name, or the server's own name while disabled
    line: str  # the description's first line, shortened
    aliases: str
    haystack: str  # everything the filter searches, casefolded
    tokens: int = -1  # computed on first use: json.dumps of 20,000 schemas takes ~0.4 s

    @property
    def enabled(self) -> bool:
        return not self.entry.settings.disabled


def _first_line(text: str) -> str:
    text = text.lstrip()
    end = text.find("\n")
    line = " ".join((text if end < 0 else text[:end])[: _DESCRIPTION_CHARS + 1].split())
    return line if len(line) <= _DESCRIPTION_CHARS else line[: _DESCRIPTION_CHARS - 1] + "…"


def _make_row(key: str, entry: ToolEntry, previous: _Row | None) -> _Row:
    shown = entry.exposed or entry.name
    aliases = ", ".join(entry.settings.aliases)
    tokens = -1
    if previous is not None and previous.entry.spec is entry.spec and previous.shown == shown:
        tokens = previous.tokens  # the schema did not change: neither did its size
    description = entry.description
    haystack = "\n".join((shown, entry.name, entry.server, aliases, description)).casefold()
    return _Row(key, entry, shown, _first_line(description), aliases, haystack, tokens)


def _same(a: ToolEntry, b: ToolEntry) -> bool:
    # Identity first: the catalogue hands out the same spec dicts until a server lists anew.
    return (
        a.exposed == b.exposed
        and a.settings == b.settings
        and a.cached == b.cached
        and (a.spec is b.spec or a.spec == b.spec)
    )


def _tokens(row: _Row) -> int:
    if row.tokens < 0:
        entry = row.entry
        row.tokens = tool_tokens({**entry.spec, "name": entry.exposed} if entry.exposed else entry.spec)
    return row.tokens


def _sort_key(column: int) -> Callable[[_Row], Any]:
    if column == NAME:
        return lambda r: r.shown.casefold()
    if column == SERVER:
        return lambda r: r.entry.server.casefold()
    if column == DESCRIPTION:
        return lambda r: r.line.casefold()
    if column == ALWAYS_ON:
        return lambda r: r.entry.settings.always_on
    if column == ENABLED:
        return lambda r: r.enabled
    if column == ALIASES:
        return lambda r: r.aliases.casefold()
    return _tokens


class CatalogueModel(QAbstractTableModel):
    """Rows in catalogue order until a column is sorted (`sort(-1)` restores that order)."""

    def __init__(
        self,
        entries: Callable[[], Sequence[ToolEntry]],
        change: ChangeTool | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._entries = entries
        self._change = change
        self._rows: list[_Row] = []
        self._row_of: dict[str, int] = {}
        self._order: dict[str, int] = {}  # catalogue order, to sort ties and to unsort
        self._sorted: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        # Bumped whenever rows move or what the filter searches changes: the filter's cue to recompute.
        self.revision = 0
        self._haystacks: tuple[int, list[str]] = (-1, [])
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.timeout.connect(self.refresh)
        self._refresh_ms = 0.0
        self._load(self._fresh_entries())

    @classmethod
    def for_context(cls, ctx: GuiContext, parent: QObject | None = None) -> CatalogueModel:
        """The window's model: the engine's catalogue, changed through `Control`, following the engine signals."""

        def change(key: str, change: ToolChange, doing: str) -> asyncio.Future[None]:
            return ctx.run(ctx.control.set_tool(key, **change), doing)

        model = cls(ctx.engine.catalogue.entries, change, parent)
        ctx.signals.catalogueChanged.connect(model.refresh_soon)
        return model

    # Reading ---------------------------------------------------------------------------------------

    def entry(self, row: int) -> ToolEntry | None:
        return self._rows[row].entry if 0 <= row < len(self._rows) else None

    def shown_name(self, row: int) -> str:
        return self._rows[row].shown

    def tokens(self, row: int) -> int:
        return _tokens(self._rows[row])

    def row_of(self, key: str) -> int:
        return self._row_of.get(key, -1)

    def haystacks(self) -> list[str]:
        """What the filter searches, one casefolded string per row (in row order)."""
        if self._haystacks[0] != self.revision:
            self._haystacks = (self.revision, [row.haystack for row in self._rows])
        return self._haystacks[1]

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
        """Re-read the engine's catalogue: the same tools → repaint only the rows that changed; tools
        came or went → one reset (views keep their selection by key: see `CataloguePage`)."""
        self._soon.stop()
        start = time.perf_counter()
        try:
            self._refresh()
        finally:
            self._refresh_ms = (time.perf_counter() - start) * 1000

    def _refresh(self) -> None:
        entries = self._fresh_entries()
        if entries.keys() != self._row_of.keys() or (
            # Unsorted rows follow the catalogue's order: servers reordered in the config move them all.
            self._sorted[0] < 0 and any(k != r.key for k, r in zip(entries, self._rows, strict=True))
        ):
            self.beginResetModel()
            self._load(entries)
            self.endResetModel()
            return
        self._order = {key: i for i, key in enumerate(entries)}
        changed: list[int] = []
        searched = False
        for key, entry in entries.items():
            row = self._row_of[key]
            old = self._rows[row]
            if not _same(old.entry, entry):
                new = _make_row(key, entry, old)
                searched = searched or new.haystack != old.haystack
                self._rows[row] = new
                changed.append(row)
        if searched:
            self.revision += 1
        last = self.columnCount() - 1
        for first, end in _runs(sorted(changed)):
            self.dataChanged.emit(self.index(first, 0), self.index(end, last))

    def _fresh_entries(self) -> dict[str, ToolEntry]:
        """The catalogue's entries by key, in its order. A server may list two tools under one name,
        which the config cannot tell apart either: the first one stands."""
        found: dict[str, ToolEntry] = {}
        for entry in self._entries():
            found.setdefault(entry.key, entry)
        return found

    def _load(self, entries: dict[str, ToolEntry]) -> None:
        previous = {row.key: row for row in self._rows}
        self._order = {key: i for i, key in enumerate(entries)}
        self._rows = [_make_row(key, entry, previous.get(key)) for key, entry in entries.items()]
        self._arrange(*self._sorted)

    def _arrange(self, column: int, order: Qt.SortOrder) -> None:
        """Rows in catalogue order, then stably sorted by `column` (ties keep that order)."""
        self._rows.sort(key=lambda r: self._order[r.key])
        if 0 <= column < len(HEADERS):
            self._rows.sort(key=_sort_key(column), reverse=order == Qt.SortOrder.DescendingOrder)
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
        if index.column() in (ALWAYS_ON, ENABLED):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
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
            if column == SERVER:
                return row.entry.server
            if column == DESCRIPTION:
                return row.line
            if column == ALIASES:
                return row.aliases
            if column == TOKENS:
                return f"{_tokens(row):,}"
            return None
        if role == _CHECK:
            if column == ALWAYS_ON:
                return check_state(row.entry.settings.always_on)
            if column == ENABLED:
                return check_state(row.enabled)
            return None
        if role == _FOREGROUND:
            if not row.enabled:
                return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
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
            return _tooltip(row, column)
        if role == _SORT:
            return _sort_key(column)(row)
        if role == _KEY:
            return row.key
        return None

    def setData(self, index: Index, value: Any, role: int = int(Qt.ItemDataRole.EditRole)) -> bool:
        if role != _CHECK or not index.isValid() or index.column() not in (ALWAYS_ON, ENABLED):
            return False
        row = self._rows[index.row()]
        on = _checked(value)
        name, key = row.shown, row.key
        if index.column() == ALWAYS_ON:
            if on == row.entry.settings.always_on:
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


def _tooltip(row: _Row, column: int) -> str | None:
    entry = row.entry
    if column == TOKENS:
        return f"About {_tokens(row):,} tokens when a client lists it"
    if column == ALWAYS_ON:
        return "Listed to clients at once, without a search" if entry.settings.always_on else "Found by a search"
    if column == ENABLED:
        return "Offered to clients" if row.enabled else "Disabled: not offered to clients"
    lines = [f"<b>{html.escape(row.shown)}</b> · {html.escape(entry.server)}"]
    if entry.exposed and entry.exposed != entry.name:
        lines.append(f"The server calls it {html.escape(entry.name)}")
    if not row.enabled:
        lines.append("<i>Disabled: not offered to clients</i>")
    if entry.cached:
        lines.append(f"<i>From the cache: {html.escape(entry.server)} has not listed its tools in this run yet</i>")
    if entry.description:
        lines.append(html.escape(entry.description).replace("\n", "<br>"))
    return "<qt>" + "<br>".join(lines) + "</qt>"  # rich text: Qt wraps long descriptions


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as contiguous (first, last) runs: one dataChanged per run."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
