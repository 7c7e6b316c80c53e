"""The Activity table: one row per call through the proxy, updated live as each call moves on.

A call is reported several times (pending → resolved → ok/error, same id): a known id updates its
row in place, a new id appends a row at the bottom. Newest at the bottom because appending never
moves the rows a user is reading or has selected (an insert at the top shifts every row under the
viewport and the selection with it), and a log reads top to bottom; the page keeps the view pinned
to the bottom while the user has not scrolled away. The model keeps at most the Activity's size;
the oldest rows go first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from mcpmanager.core.proxy.activity import Activity, CallRecord, Outcome
from mcpmanager.gui.engine_signals import EngineSignals

Index = QModelIndex | QPersistentModelIndex
TIME, CALLED, VIA, RESOLVED, HOW, DURATION, RESULT, APPROVAL, DETAIL = range(9)
HEADERS = ("Time", "Called", "Via", "Resolved to", "How", "Duration", "Result", "Approval", "Detail")
SORT_ROLE = Qt.ItemDataRole.UserRole
RECORD_ROLE = Qt.ItemDataRole.UserRole + 1  # the row's CallRecord (the page reads it through proxies)

OUTCOME_COLOURS: dict[Outcome, str] = {
    "ok": "#1a7f37",
    "error": "#cf222e",
    "refused": "#bc4c00",
    "unknown": "#8250df",
    "pending": "#8c959f",
    "cancelled": "#57606a",
}


def how_text(record: CallRecord) -> str:
    """`normalized`, `exact; q→query`, `normalized; repository→repo, issue_title→title`."""
    renames = ", ".join(f"{passed}→{declared}" for passed, declared in record.renames)
    return "; ".join(part for part in (record.how or "", renames) if part)


def resolved_text(record: CallRecord) -> str:
    return f"{record.exposed} [{record.server}]" if record.exposed else ""


def duration_text(record: CallRecord) -> str:
    if record.duration is None or record.outcome == "pending":
        return ""
    ms = record.duration * 1000
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"


def can_make_alias(record: CallRecord) -> bool:
    """A name that needed repair (not exact, not already an alias) or that nothing answered."""
    if record.outcome == "unknown":
        return True
    return record.server is not None and record.tool is not None and record.how not in (None, "exact", "alias")


def is_repaired_or_failed(record: CallRecord) -> bool:
    return record.resolved or record.outcome in ("error", "refused", "unknown")


class ActivityModel(QAbstractTableModel):
    def __init__(self, activity: Activity, signals: EngineSignals | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.size = activity.size
        self._rows: list[CallRecord] = activity.records()[-self.size :]
        # id → absolute position; row = position - _base, so dropping the oldest rows is O(1).
        self._base = 0
        self._positions = {record.id: i for i, record in enumerate(self._rows)}
        self._newest_id = max((r.id for r in self._rows), default=0)  # ids only grow (Activity counts)
        if signals is not None:
            signals.callsChanged.connect(self.apply)

    # Following the engine ---------------------------------------------------------------------------

    def apply(self, records: Sequence[CallRecord]) -> None:
        """One batch from the engine signals, in the order things happened (an id may appear several times)."""
        updates: dict[int, CallRecord] = {}
        new: dict[int, CallRecord] = {}
        for record in records:
            if record.id in self._positions:
                updates[record.id] = record
            elif record.id in new or record.id > self._newest_id:
                new[record.id] = record
            # else: a call cleared from the view or dropped as old; it does not come back
        if new:
            self._newest_id = max(self._newest_id, *new)
        self._drop_oldest(len(self._rows) + len(new) - self.size)
        self._update(updates)
        self._append(list(new.values())[-self.size :])

    def clear(self) -> None:
        """Empty the view (the engine's Activity keeps its records); calls already seen stay away."""
        self.beginResetModel()
        self._base += len(self._rows)
        self._rows = []
        self._positions = {}
        self.endResetModel()

    def _drop_oldest(self, count: int) -> None:
        count = min(count, len(self._rows))
        if count <= 0:
            return
        self.beginRemoveRows(QModelIndex(), 0, count - 1)
        for record in self._rows[:count]:
            del self._positions[record.id]
        del self._rows[:count]
        self._base += count
        self.endRemoveRows()

    def _update(self, updates: dict[int, CallRecord]) -> None:
        rows = []
        for record_id, record in updates.items():
            position = self._positions.get(record_id)
            if position is not None:  # not dropped just now
                self._rows[position - self._base] = record
                rows.append(position - self._base)
        if rows:  # one signal for the batch: the updated rows are the newest few, next to each other
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), len(HEADERS) - 1))

    def _append(self, records: list[CallRecord]) -> None:
        if not records:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(records) - 1)
        for record in records:
            self._positions[record.id] = self._base + len(self._rows)
            self._rows.append(record)
        self.endInsertRows()

    # Reading ------------------------------------------------------------------------------------------

    def record_at(self, row: int) -> CallRecord | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, record_id: int) -> int:
        position = self._positions.get(record_id)
        return -1 if position is None else position - self._base

    def records(self) -> list[CallRecord]:
        return list(self._rows)

    # Qt's model interface -------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's name and default)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(HEADERS)
        ):
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        record = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(record, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == RESULT:
            return QColor(OUTCOME_COLOURS[record.outcome])
        if role == Qt.ItemDataRole.ToolTipRole:
            if column in (DETAIL, RESULT) and record.detail:
                return record.detail
            if column == TIME:
                return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.started))
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and column == DURATION:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SORT_ROLE:
            if column == TIME:
                return record.started
            if column == DURATION:
                return record.duration if record.duration is not None else -1.0
            return _display(record, column).lower()
        if role == RECORD_ROLE:
            return record
        return None


def _display(record: CallRecord, column: int) -> str:
    if column == TIME:
        return time.strftime("%H:%M:%S", time.localtime(record.started))
    if column == CALLED:
        return record.called
    if column == VIA:
        return record.via
    if column == RESOLVED:
        return resolved_text(record)
    if column == HOW:
        return how_text(record)
    if column == DURATION:
        return duration_text(record)
    if column == RESULT:
        return record.outcome
    if column == APPROVAL:
        return record.approval or ""  # asked before the call: what was decided, by whom
    if column == DETAIL:
        return record.detail or ""
    return ""


class ActivityFilter(QSortFilterProxyModel):
    """Sorts by each column's sort key and narrows to repaired or failed calls and/or a text."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)  # the text filter looks at every column
        self._only_repaired = False

    @property
    def only_repaired(self) -> bool:
        return self._only_repaired

    def set_only_repaired(self, only: bool) -> None:
        self.beginFilterChange()
        self._only_repaired = only
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if self._only_repaired:
            record = self.sourceModel().index(source_row, 0, source_parent).data(RECORD_ROLE)
            if isinstance(record, CallRecord) and not is_repaired_or_failed(record):
                return False
        return super().filterAcceptsRow(source_row, source_parent)


def records_of(model: ActivityModel | ActivityFilter, rows: Iterable[int]) -> list[CallRecord]:
    """The records shown on `rows` of either model (the page's selection is in the filter's rows)."""
    found = [model.index(row, 0).data(RECORD_ROLE) for row in rows]
    return [r for r in found if isinstance(r, CallRecord)]
