"""What was learned from use, on the Catalogue page: the (query → tool) pairs discovery keeps
(`core/proxy/learning`), each with a Forget button, and Forget all; above the table, the tools worth
making always-on with what each would add to every client's resting context, one click to do it.

Both follow the engine's store as it changes (a client's call teaches while the window is open),
redrawn at most every `REDRAW_MS` so a client calling in a tight loop does not redraw it per call.
"""

from __future__ import annotations

import time
from functools import partial

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.proxy.learned import Learned
from mcpmanager.core.proxy.suggestions import Suggestion
from mcpmanager.gui.context import GuiContext

REDRAW_MS = 200
QUERY, TOOL, USES, LAST, FORGET = range(5)
_HEADERS = ("Query", "Tool it led to", "Uses", "Last used", "")


def ago(when: float, now: float | None = None) -> str:
    """`when` as people say it: "just now", "5 min ago", "3 h ago", "2 days ago"."""
    seconds = max(0.0, (time.time() if now is None else now) - when)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


class _Follows(QWidget):
    """A widget redrawn (coalesced) whenever the engine's learned pairs or catalogue change."""

    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.refresh)
        self._unsubscribe = ctx.engine.router.learning.store.changed.connect(lambda _: self._redraw.start())
        ctx.signals.catalogueChanged.connect(self._redraw.start)
        self.destroyed.connect(lambda *_: self._unsubscribe())

    def refresh(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def learned_text(entries: list[Learned], key: str, shown: int = 3) -> str:
    """What was learned about the tool `key`, in a line for its detail ("" when nothing)."""
    mine = [e for e in entries if e.tool == key]
    if not mine:
        return ""
    quoted = [f"“{e.query}”" + (f" ({e.count}×)" if e.count > 1 else "") for e in mine[:shown]]
    more = f" and {len(mine) - shown} more" if len(mine) > shown else ""
    return f"{', '.join(quoted)}{more}: similar queries rank it higher (Learned lists them, with Forget)"


class LearnedPanel(_Follows):
    """The pairs, the most recently used first."""

    refreshed = Signal()  # after each redraw: what was learned may have changed

    def __init__(self, ctx: GuiContext) -> None:
        super().__init__(ctx)
        self.setObjectName("learnedPanel")
        self.entries: list[Learned] = []
        title = QLabel("<b>Learned from your use</b>")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.forget_all_button = QPushButton("Forget all")
        self.forget_all_button.clicked.connect(self.forget_all)
        self.table = QTableWidget(0, len(_HEADERS))
        self.table.setHorizontalHeaderLabels(_HEADERS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QUERY, QHeaderView.ResizeMode.Stretch)
        for column, width in ((TOOL, 220), (USES, 52), (LAST, 96), (FORGET, 80)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, width)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.forget_all_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.refresh()

    def refresh(self) -> None:
        store = self.ctx.engine.router.learning.store
        self.entries = store.entries()
        names = {t.key: t.exposed for t in self.ctx.engine.catalogue.tools()}
        self.note.setText(
            "When a client calls a tool that discover_tools showed it, the query and the tool are kept "
            "here (never the call's arguments), on this computer only, and lift that tool for similar "
            "queries later. Forget removes a pair for good."
            if self.entries
            else "Nothing learned yet. When a client calls a tool that discover_tools showed it, the query "
            "and the tool appear here; they lift that tool for similar queries later."
        )
        self.forget_all_button.setEnabled(bool(self.entries))
        self.table.setRowCount(len(self.entries))
        now = time.time()
        for row, entry in enumerate(self.entries):
            shown = names.get(entry.tool)
            tool = f"{shown}  [{entry.tool.split(':', 1)[0]}]" if shown else f"{entry.tool} (not available now)"
            cells = {QUERY: entry.query, TOOL: tool, USES: str(entry.count), LAST: ago(entry.last, now)}
            for column, text in cells.items():
                item = QTableWidgetItem(text)
                item.setToolTip(entry.query if column == QUERY else entry.tool if column == TOOL else "")
                if column == USES:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
            button = QPushButton("Forget")
            button.setToolTip(f"Forget that “{entry.query}” led to {entry.tool}")
            button.clicked.connect(partial(self.forget, entry))
            self.table.setCellWidget(row, FORGET, button)
        self.refreshed.emit()

    def forget(self, entry: Learned) -> None:
        self.ctx.engine.router.learning.store.forget(entry.query, entry.tool)
        self.refresh()

    def forget_all(self) -> None:
        self.ctx.engine.router.learning.store.forget_all()
        self.refresh()


def suggestion_text(suggestion: Suggestion) -> str:
    times = "time" if suggestion.calls == 1 else "times"
    return (
        f"{suggestion.tool.exposed} [{suggestion.tool.server}] — called {suggestion.calls} {times} through "
        f"discovery; always-on would add {suggestion.tokens:,} tokens to every client's resting context"
    )


class SuggestionBar(_Follows):
    """“Suggested always-on”: one line per tool with its price and a button; hidden when there is none."""

    def __init__(self, ctx: GuiContext) -> None:
        super().__init__(ctx)
        self.setObjectName("alwaysOnSuggestions")
        self.suggestions: list[Suggestion] = []
        self.frame = QFrame()
        self.frame.setObjectName("suggestionFrame")
        self.frame.setStyleSheet("#suggestionFrame { background: #eef6ff; border: 1px solid #b6d4fe; }")
        self.rows = QVBoxLayout(self.frame)
        self.rows.setContentsMargins(10, 6, 10, 6)
        self.buttons: list[QPushButton] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.frame)
        self.refresh()

    def refresh(self) -> None:
        self.suggestions = self.ctx.engine.suggestions()
        while self.rows.count():
            item = self.rows.takeAt(0)
            if item is not None and (widget := item.widget()) is not None:
                widget.deleteLater()
        self.buttons = []
        self.setVisible(bool(self.suggestions))
        if not self.suggestions:
            return
        self.rows.addWidget(QLabel("<b>Suggested always-on</b> (listed to clients at once, no search needed)"))
        for suggestion in self.suggestions:
            line = QWidget()
            row = QHBoxLayout(line)
            row.setContentsMargins(0, 0, 0, 0)
            label = QLabel(suggestion_text(suggestion))
            label.setTextFormat(Qt.TextFormat.PlainText)
            button = QPushButton(f"Make always on (+{suggestion.tokens:,} tokens)")
            button.clicked.connect(partial(self.make_always_on, suggestion))
            row.addWidget(label, 1)
            row.addWidget(button)
            self.rows.addWidget(line)
            self.buttons.append(button)

    def make_always_on(self, suggestion: Suggestion) -> None:
        key = suggestion.tool.key
        self.ctx.run(self.ctx.control.set_tool(key, always_on=True), f"make {suggestion.tool.exposed} always on")
