"""The review of held tools, prompts and resource templates: each one's approved and new definition
as a diff (removed lines red, added green, the characters that changed darker, monospace), and
Approve / Approve all.

Approving is the core's approval (`Engine.approve`, as `mcpmanager pins approve` does: the pins
file, checked against the fingerprint the engine reported for what is shown); it is served
again at once and leaves the list. Non-modal: the window and the engine go on while it is open.
The diff's text is masked by the tool's server's masker, as its log and errors are.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetricsF, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.catalogue.pin_diff import DiffLine, diff
from mcpmanager.core.catalogue.pins import Held
from mcpmanager.core.config.secrets import mask
from mcpmanager.gui import style
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.held_watch import NOUNS, HeldWatch

KEY_ROLE = Qt.ItemDataRole.UserRole
# Line backgrounds and, darker, the changed characters within a line (GitHub's diff colours).
LINE = {"-": "#ffebe9", "+": "#dafbe1", " ": "#ffffff"}
WORDS = {"-": "#ffc1bc", "+": "#aceebb"}
INK = {"-": "#82071e", "+": "#116329", " ": "#1f2328"}


class PinsReview(QDialog):
    def __init__(self, ctx: GuiContext, watch: HeldWatch, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.watch = watch
        self.setWindowTitle("mcpmanager: held for review")
        self.setModal(False)
        self.resize(980, 560)
        intro = QLabel(
            "These tools, prompts or resource templates changed since you approved them, or are new on a server "
            "you approved. Clients do not see them until you approve. Read what changed first: a model does what "
            "a description says."
        )
        intro.setWordWrap(True)
        self.tools = QListWidget()
        self.tools.currentItemChanged.connect(self._show_current)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.view = QTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(style.monospace())
        self.view.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.summary)
        column.addWidget(self.view, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tools)
        splitter.addWidget(right)
        splitter.setSizes([260, 720])
        self.approve_button = QPushButton("Approve")
        self.approve_button.clicked.connect(self.approve_current)
        self.approve_all_button = QPushButton("Approve all")
        self.approve_all_button.clicked.connect(self.approve_all)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.approve_all_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        watch.changed.connect(self.refresh)
        self.refresh()

    def held(self, key: str | None) -> Held | None:
        return next((h for h in self.watch.held if h.key == key), None)

    def current(self) -> Held | None:
        item = self.tools.currentItem()
        return self.held(item.data(KEY_ROLE)) if item is not None else None

    def select(self, key: str) -> None:
        for row in range(self.tools.count()):
            if self.tools.item(row).data(KEY_ROLE) == key:
                self.tools.setCurrentRow(row)

    def refresh(self) -> None:
        """The list as held now, the selection kept where it still is."""
        kept = self.current()
        self.tools.clear()
        for held in self.watch.held:
            item = QListWidgetItem(
                f"{held.key}\n    {'new ' + NOUNS[held.kind][0] if held.new else 'changed: ' + ', '.join(held.changed)}"
            )
            item.setData(KEY_ROLE, held.key)
            item.setToolTip(held.refusal())
            self.tools.addItem(item)
        if kept is not None and self.held(kept.key) is not None:
            self.select(kept.key)
        elif self.tools.count():
            self.tools.setCurrentRow(0)
        has = bool(self.watch.held)
        self.approve_button.setEnabled(has)
        self.approve_all_button.setEnabled(has)
        if not has:
            self.summary.setText(
                "Nothing is held for review: every tool, prompt and template clients could see is served."
            )
            self.view.clear()

    def _show_current(self, *_: object) -> None:
        held = self.current()
        if held is None:
            return
        name = f"<b>{html.escape(held.key)}</b>"
        if held.new and held.damaged:  # nothing to compare with: the pins file cannot be read
            self.summary.setText(
                f"{name} was not served before and the pins file cannot be read, so it is held (all shown "
                "as added). Repair or reset the file to approve it."
            )
        elif held.new and held.findings:
            self.summary.setText(f"{name} is held for what its definition says (all shown as added).")
        elif held.new:
            self.summary.setText(
                f"{name} is new: its server added it after you approved its {NOUNS[held.kind][1]} (all shown as added)."
            )
        else:
            changed = html.escape(", ".join(held.changed))
            self.summary.setText(f"{name} changed since you approved it ({changed}): removed lines red, added green.")
        if held.findings:  # (reasons come with invisible characters written as escapes: shown as they are)
            found = "".join(f"<li>{html.escape(finding)}</li>" for finding in held.findings)
            self.summary.setText(
                f"{self.summary.text()}<br><b>It looks like tool poisoning</b>: read it before approving."
                f"<ul>{found}</ul>"
            )
        self.show_diff(self.diff_of(held))

    def diff_of(self, held: Held) -> list[DiffLine]:
        downstream = self.ctx.engine.downstreams.get(held.server)
        if downstream is None:
            return diff(held.approved, held.now, mask)  # gone meanwhile: shown masked by the rule
        return diff(held.approved, held.now, downstream.log.mask)

    def show_diff(self, lines: list[DiffLine]) -> None:
        self.view.clear()
        cursor = QTextCursor(self.view.document())
        sign = QFontMetricsF(self.view.font()).horizontalAdvance("- ")
        for n, line in enumerate(lines):
            block = QTextBlockFormat()
            block.setBackground(QColor(LINE[line.kind]))
            block.setLeftMargin(sign)  # a wrapped line goes on under its text, not under the sign
            block.setTextIndent(-sign)
            ink = QTextCharFormat()
            ink.setForeground(QColor(INK[line.kind]))
            if n:
                cursor.insertBlock(block, ink)
            else:
                cursor.setBlockFormat(block)
            marked = QTextCharFormat(ink)
            marked.setBackground(QColor(WORDS.get(line.kind, LINE[" "])))
            text, last = f"{line.kind} {line.text}", 0
            for start, end in ((s + 2, e + 2) for s, e in line.spans):  # after the "- " sign
                cursor.insertText(text[last:start], ink)
                cursor.insertText(text[start:end], marked)
                last = end
            cursor.insertText(text[last:], ink)
        self.view.moveCursor(QTextCursor.MoveOperation.Start)

    def approve_current(self) -> None:
        held = self.current()
        if held is not None:
            self._approve([held])

    def approve_all(self) -> None:
        self._approve(list(self.watch.held))

    def _approve(self, held: list[Held]) -> None:
        try:
            self.ctx.engine.approve([h.describe() for h in held])
        except (ValueError, OSError) as exc:
            self.ctx.errors.report(f"Could not approve {', '.join(h.key for h in held)}: {exc}")
        self.watch.refresh()  # the engine reviewed them at once: the list follows now, not at the next signal
