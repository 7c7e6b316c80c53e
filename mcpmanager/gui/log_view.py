"""One server's stderr, live: a bounded, read-only monospace pane that keeps up with a flood.

The log calls its listeners from inside the stderr pump (core code on the event loop), so the
listener only drops lines into a bounded inbox; a single-shot timer lets them out at most every
FLUSH_MS as ONE `appendPlainText` of the joined text. Before appending, the flush removes the lines
the append would push out itself (see `_trim`: Qt's own trimming lays out every line it removes).
Measured on a full 5,000-line view (offscreen, 2-core box), a flush costs about 3 µs a line, so
about 15 ms at most however fast the server writes (tests/bench/bench_gui_stderr.py). Colours
(mcpmanager's own lines, a server's MCP log messages by level: `log_marks`) are laid only on the
lines on screen.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.supervisor.stderr_log import LogLine, StderrLog
from mcpmanager.gui import style
from mcpmanager.gui.log_marks import SKIPPED_MARK, marks

# Bound of the view. A QTextDocument's memory, the worst flush (about 3 µs a line) and a find all
# grow with it; 5,000 lines is more than the log's ring (2,000 by default) and keeps a flush ≤ 15 ms.
VIEW_LINES = 5000
# Bound of the inbox between flushes. More lines than the view holds would only be pushed out again
# by the same flush, so only the newest are kept (the rest are counted and reported as skipped):
# a flood then costs what one full view costs, not what the server wrote. One block is left over
# for the "skipped" line.
PENDING_LINES = VIEW_LINES - 1
FLUSH_MS = 50  # how long lines may wait: fast enough to read as live, slow enough to batch a flood
_STAMP_WIDTH = len("HH:MM:SS ")


class _Inbox:
    """Lines waiting for the next flush. Plain Python: what the log calls must never reach into a Qt
    object that may be gone, nor raise (an exception would end the server's stderr pump); and it must
    be cheap, as it runs inside the pump: one deque extend per batch, no formatting."""

    def __init__(self, keep: int, wake: Callable[[], None]) -> None:
        self.lines: deque[LogLine] = deque(maxlen=keep)
        self.arrived = 0  # since the last take; minus what is kept, the lines skipped
        self._wake = wake
        self._unsubscribe: Callable[[], None] | None = None

    def subscribe(self, log: StderrLog) -> None:
        self.unsubscribe()
        self._unsubscribe = log.appended.connect(self.receive)

    def unsubscribe(self, *_: object) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.clear()

    def receive(self, batch: list[LogLine]) -> None:
        self.put(batch)
        self._wake()

    def put(self, batch: list[LogLine]) -> None:
        self.lines.extend(batch)
        self.arrived += len(batch)

    def take(self) -> tuple[list[LogLine], int]:
        lines = list(self.lines)
        skipped = self.arrived - len(lines)
        self.clear()
        return lines, skipped

    def clear(self) -> None:
        self.lines.clear()
        self.arrived = 0


class _FindField(QLineEdit):
    """Enter finds the next match, Shift+Enter the previous one (QLineEdit alone can't tell them apart)."""

    findRequested = Signal(bool)  # backward

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.findRequested.emit(bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
            return
        super().keyPressEvent(event)


class LogView(QWidget):
    """Shows one StderrLog: its ring at once, then every new line; follows the tail unless scrolled up."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._log: StderrLog | None = None
        self._path: Path | None = None
        self._following = True
        self._adjusting = False  # the scroll bar moves because we moved it, not the user
        self._marked = False  # some lines are highlighted now
        self.skipped = 0  # lines that never reached the view (a flood outran it) since attach
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        self._inbox = _Inbox(PENDING_LINES, self._wake)
        # A view deleted while attached must leave the log: its listener would raise into the pump.
        self.destroyed.connect(self._inbox.unsubscribe)

        editor = self.text_edit = QPlainTextEdit()
        editor.setReadOnly(True)
        editor.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        editor.setUndoRedoEnabled(False)  # an undo stack would keep every line pushed out: unbounded
        editor.setMaximumBlockCount(VIEW_LINES)
        # No wrapping: one line is one scroll step, which keeps "stay where the user is" exact, and
        # layout stays per visible line.
        editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        editor.setFont(style.monospace())
        vbar = editor.verticalScrollBar()
        vbar.valueChanged.connect(self._scrolled)
        vbar.rangeChanged.connect(self._range_changed)
        editor.viewport().installEventFilter(self)  # a taller view shows lines to highlight

        self.find_field = _FindField()
        self.find_field.setPlaceholderText("Find (Ctrl+F)")
        self.find_field.setClearButtonEnabled(True)
        self.find_field.findRequested.connect(self.find_next)
        self.find_status = QLabel()  # "not found", and the like
        self.find_field.textChanged.connect(self.find_status.clear)
        self.follow_button = self._button("Follow", "Keep the newest line in view (scroll up to pause)")
        self.follow_button.setCheckable(True)
        self.follow_button.setChecked(True)
        self.follow_button.toggled.connect(self._set_following)
        self.copy_button = self._button("Copy", "Copy the selection, or everything shown when nothing is selected")
        self.copy_button.clicked.connect(self.copy)
        self.clear_button = self._button("Clear view", "Empty this view; the server's log and its file stay")
        self.clear_button.clicked.connect(self.clear_view)
        self.open_button = self._button("Open log file", "Open the log file in the default application")
        self.open_button.clicked.connect(self.open_log_file)
        self.open_button.setEnabled(False)

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.find_field, 1)
        bar.addWidget(self.find_status)
        for button in (self.follow_button, self.copy_button, self.clear_button, self.open_button):
            bar.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(editor, 1)

        # Only while the pane has focus. Ctrl+F is the window's (`main_window`): it must reach this field
        # from outside the pane too, and two Ctrl+F shortcuts in one window would cancel each other.
        # setContext, not the constructor's `context=`, which PySide6 ignores (window-wide).
        for keys, slot in (
            (QKeySequence.StandardKey.FindNext, lambda: self.find_next(False)),
            (QKeySequence.StandardKey.FindPrevious, lambda: self.find_next(True)),
        ):
            shortcut = QShortcut(keys, self, slot)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        return button

    # Attaching ------------------------------------------------------------------------------------

    def attach(self, log: StderrLog | None, path: Path | None = None) -> None:
        """Show `log`: its ring at once, then its new lines; None clears the view and detaches.
        `path` is the log file to open (the log's own file when not given)."""
        self.detach()
        self.text_edit.clear()
        self.skipped = 0
        self.find_status.clear()
        self._log = log
        self._path = path if path is not None or log is None else log.path
        self.open_button.setEnabled(self._path is not None)
        self.follow_button.setChecked(True)
        if log is None:
            return
        self._inbox.put(list(log.lines))  # what the ring holds now, through the same bounds
        self.flush()
        self._inbox.subscribe(log)  # nothing runs between the two: no line is missed or doubled

    def detach(self) -> None:
        """Stop following the log (what is shown stays)."""
        self._inbox.unsubscribe()
        self._timer.stop()
        self._log = None

    @property
    def log(self) -> StderrLog | None:
        return self._log

    @property
    def following(self) -> bool:
        return self._following

    def text(self) -> str:
        """Everything shown, one line per log line."""
        return self.text_edit.toPlainText()

    # Flushing -------------------------------------------------------------------------------------

    def _wake(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Show what gathered since the last flush (the timer does this; tests may call it)."""
        self._timer.stop()
        lines, skipped = self._inbox.take()
        if not lines:
            return
        self.skipped += skipped
        shown: list[str] = []
        if skipped:
            where = " (see the log file)" if self._path is not None else ""
            shown.append(f"{_stamp(lines[0].time)}{SKIPPED_MARK}{skipped:,} lines skipped here{where}")
        when, stamp = -1.0, ""
        for line in lines:
            if line.time != when:  # a batch shares one time: format it once, not per line
                when, stamp = line.time, _stamp(line.time)
            shown.append(stamp + line.text)
        text = "\n".join(shown)
        if "\u2028" in text or "\u2029" in text:  # Qt would break these into more lines than we count
            text = text.replace("\u2028", " ").replace("\u2029", " ")
        self._append(text, len(shown))

    def _append(self, text: str, count: int) -> None:
        editor = self.text_edit
        document = editor.document()
        vbar, hbar = editor.verticalScrollBar(), editor.horizontalScrollBar()
        present = 0 if document.isEmpty() else document.blockCount()
        pushed_out = min(max(present + count - VIEW_LINES, 0), present)
        top, left = vbar.value(), hbar.value()
        self._adjusting = True
        try:
            if pushed_out == present > 0:
                editor.clear()  # every line shown goes: nothing to keep
            elif pushed_out:
                self._trim(pushed_out)
            editor.appendPlainText(text)
            # Following: the newest line in view. Not following: the same lines stay in view (the
            # ones above them that were pushed out no longer count), until they are pushed out too.
            vbar.setValue(vbar.maximum() if self._following else max(top - pushed_out, 0))
            hbar.setValue(left)
        finally:
            self._adjusting = False
        self._mark_lines()

    def _trim(self, blocks: int) -> None:
        """Remove the oldest `blocks` lines, so the append never reaches the block limit. The limit
        trims by walking a cursor block by block, and every block walked is laid out: 10-25 µs a line,
        70 ms for a full view. Selecting up to a position skips the walk (about 1 µs a line)."""
        document = self.text_edit.document()
        cursor = QTextCursor(document)
        cursor.setPosition(document.findBlockByNumber(blocks).position(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()  # the user's selection and the highlights move with the text

    def _mark_lines(self) -> None:
        """Colour the supervisor's own lines and servers' log messages by level (`log_marks`) among
        the lines on screen. Only the visible ones: a per-line highlighter would run Python for every
        line of a flood; this runs for a screenful."""
        editor = self.text_edit
        block = editor.firstVisibleBlock()
        rows = editor.viewport().height() // max(editor.fontMetrics().lineSpacing(), 1) + 2
        selections: list[QTextEdit.ExtraSelection] = []
        for _ in range(rows):
            if not block.isValid():
                break
            start = block.position()
            for mark in marks(block.text(), _STAMP_WIDTH):
                cursor = QTextCursor(block)
                cursor.setPosition(start + mark.start)
                if mark.end < 0:
                    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
                else:
                    cursor.setPosition(start + mark.end, QTextCursor.MoveMode.KeepAnchor)
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                selection.format = mark.format
                selections.append(selection)
            block = block.next()
        if selections or self._marked:
            editor.setExtraSelections(selections)
            self._marked = bool(selections)

    # Following ------------------------------------------------------------------------------------

    def _scrolled(self, value: int) -> None:
        if self._adjusting:
            return  # our own move: whoever moved marks the lines once it is done
        at_bottom = value >= self.text_edit.verticalScrollBar().maximum()
        if at_bottom != self._following:
            self.follow_button.setChecked(at_bottom)  # scrolled up: pause; back at the bottom: follow
        self._mark_lines()

    def _range_changed(self, _low: int, high: int) -> None:
        # A resize changes the range without the user scrolling: stay at the bottom if following.
        if self._following and not self._adjusting:
            self._scroll_to(high)

    def _set_following(self, on: bool) -> None:
        self._following = on
        if on:
            self._scroll_to(self.text_edit.verticalScrollBar().maximum())

    def _scroll_to(self, value: int) -> None:
        self._adjusting = True
        try:
            self.text_edit.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False
        self._mark_lines()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._mark_lines()
        return super().eventFilter(watched, event)

    # Actions --------------------------------------------------------------------------------------

    def find_next(self, backward: bool = False) -> bool:
        """Select the next (or previous) match of the find field's text, wrapping around."""
        needle = self.find_field.text()
        if not needle:
            self.find_status.clear()
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        document = self.text_edit.document()
        match = document.find(needle, self.text_edit.textCursor(), flags)
        if match.isNull():  # wrap around; searched on the document so a miss leaves the view alone
            start = QTextCursor(document)
            start.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
            match = document.find(needle, start, flags)
        if match.isNull():
            self.find_status.setText("not found")
            return False
        self.find_status.clear()
        self.text_edit.setTextCursor(match)  # selects it and scrolls it into view (which pauses following)
        return True

    def copy(self) -> None:
        """Copy the selection, or everything shown when nothing is selected."""
        cursor = self.text_edit.textCursor()
        text = cursor.selectedText().replace("\u2029", "\n") if cursor.hasSelection() else self.text()
        QGuiApplication.clipboard().setText(text)

    def clear_view(self) -> None:
        """Empty the view (and lines waiting for it); the log's ring and its file stay."""
        self._inbox.clear()
        self._timer.stop()
        self.text_edit.clear()
        self.find_status.clear()
        self.follow_button.setChecked(True)

    def open_log_file(self) -> bool:
        path = self._path
        if path is None:
            return False
        if not path.exists():
            self.find_status.setText("no log file yet")
            return False
        opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
        if not opened:
            self.find_status.setText("could not open the log file")
        return opened


def _stamp(when: float) -> str:
    return time.strftime("%H:%M:%S ", time.localtime(when))
