"""The servers table: a status light, the name, the tool count, and the state line (`ready`,
`backoff: exited 3 — fatal: no API key (retry in 4 s)`: `core/supervisor/state_line.py`).

Rows follow the config's order (disabled servers included). The model never decides anything: it
reads each server's status from the engine when the engine signals say it changed, and repaints only the
rows that did (a crash-looping server must not repaint the whole table).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui import style

Index = QModelIndex | QPersistentModelIndex
NAME, TOOLS, STATE = range(3)
HEADERS = ("Server", "Tools", "State")
SORT_ROLE = Qt.ItemDataRole.UserRole


def tool_count(engine: Engine, name: str) -> str:
    downstream = engine.downstreams.get(name)
    if downstream is not None and downstream.tools is not None:
        return str(len(downstream.tools))
    cached = engine.catalogue.server_tools(name)
    return f"{len(cached)} (cached)" if cached is not None else "—"


class ServersModel(QAbstractTableModel):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self.engine = engine
        self.names: list[str] = list(engine.config.servers)

    def reload(self) -> None:
        """Servers came, went or were replaced: a bulk change, so a reset."""
        names = list(self.engine.config.servers)
        if names == self.names:
            self.refresh(set(names))
            return
        self.beginResetModel()
        self.names = names
        self.endResetModel()

    def refresh(self, servers: set[str]) -> None:
        for row, name in enumerate(self.names):
            if name in servers:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(HEADERS) - 1))

    def name_at(self, row: int) -> str | None:
        return self.names[row] if 0 <= row < len(self.names) else None

    def row_of(self, name: str) -> int:
        return self.names.index(name) if name in self.names else -1

    # Qt's model interface -------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's name and default)
        return 0 if parent.isValid() else len(self.names)

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
        if not index.isValid() or not 0 <= index.row() < len(self.names):
            return None
        name = self.names[index.row()]
        downstream = self.engine.downstreams.get(name)
        state = downstream.status.state if downstream is not None else State.STOPPED
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == NAME:
                return name
            if column == TOOLS:
                return tool_count(self.engine, name)
            if column == STATE:
                return downstream.state_line() if downstream is not None else "stopped"
        elif role == Qt.ItemDataRole.DecorationRole and column == NAME:
            return style.light(state)
        elif role == Qt.ItemDataRole.ToolTipRole and downstream is not None:
            tail = "\n".join(downstream.log.tail(5))
            return downstream.state_line() + (f"\n\nLast stderr lines:\n{tail}" if tail else "")
        elif role == Qt.ItemDataRole.ForegroundRole and state in (State.DISABLED, State.STOPPED):
            return style.colour(State.DISABLED)
        elif role == SORT_ROLE:
            if column == TOOLS:
                return len(downstream.tools) if downstream is not None and downstream.tools is not None else -1
            if column == STATE:
                return style.SEVERITY[state]
            return name.lower()
        elif role == Qt.ItemDataRole.TextAlignmentRole and column == TOOLS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
