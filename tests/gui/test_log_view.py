"""The live stderr pane: real fixture servers flooding a real engine, and bare logs fed by hand."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
import shiboken6
from mcp import Client
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextCursor
from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.gui.log_view import PENDING_LINES, VIEW_LINES, LogView
from tests.helpers.conformance import conformance_fixture
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

FLOOD = 20_000
_NUMBER = re.compile(r"flood line (\d+)$")


def _view(qtbot: QtBot) -> LogView:
    view = LogView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    return view


def _block(view: LogView, number: int) -> str:
    return view.text_edit.document().findBlockByNumber(number).text()


def _at_bottom(view: LogView) -> bool:
    bar = view.text_edit.verticalScrollBar()
    return bar.value() == bar.maximum()


def _top_line(view: LogView) -> str:
    return view.text_edit.firstVisibleBlock().text()


_DEBUG, _INFO, _WARNING, _ERROR = "#8c959f", "#0969da", "#bc4c00", "#cf222e"


class _Mark(NamedTuple):
    line: str  # the log line it is on, without the pane's time stamp
    text: str  # what it covers: the whole line (with the stamp) or a part
    whole: bool
    colour: str
    background: str | None


def _marks(view: LogView) -> list[_Mark]:
    """Each highlight on screen."""
    found = []
    for selection in view.text_edit.extraSelections():
        cursor, look = selection.cursor, selection.format
        block, text = cursor.block().text(), cursor.selectedText()
        brush = look.background()
        background = brush.color().name() if brush.style() != Qt.BrushStyle.NoBrush else None
        found.append(_Mark(block[9:], text, text == block, look.foreground().color().name(), background))
    return found


# A real engine and real servers ------------------------------------------------------------------


async def test_a_flood_from_a_real_server_reaches_the_view_within_bounds(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"noisy": fixture("--name", "noisy", "--flood", str(FLOOD))}) as ctx:
        view = _view(qtbot)
        log = ctx.engine.downstreams["noisy"].log
        view.attach(log, log.path)
        most_blocks = 0

        def last_line_shown() -> bool:
            nonlocal most_blocks
            most_blocks = max(most_blocks, view.text_edit.blockCount())
            return f"flood line {FLOOD - 1}" in view.text()

        await until(last_line_shown, timeout=30)
        assert most_blocks <= VIEW_LINES
        assert view.following and _at_bottom(view)
        # What is shown is the stream in order: no line twice, none out of place, and every gap in
        # the numbering (lines dropped while the flood outran the view) is marked where it happened.
        shown = view.text().splitlines()
        numbers: list[int] = []
        previous = -1  # where the last flood line was
        for index, line in enumerate(shown):
            found = _NUMBER.search(line)
            if found is None:
                continue
            number = int(found.group(1))
            if numbers and number != numbers[-1] + 1:
                assert number > numbers[-1], line
                between = shown[previous + 1 : index]
                assert any("lines skipped here (see the log file)" in other for other in between), (numbers[-1], line)
            numbers.append(number)
            previous = index
        assert numbers[-1] == FLOOD - 1
        assert view.open_button.isEnabled()


async def test_scrolled_up_the_view_stays_put_and_the_bottom_resumes_following(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"noisy": fixture("--name", "noisy", "--flood", "400")}) as ctx:
        view = _view(qtbot)
        downstream = ctx.engine.downstreams["noisy"]
        view.attach(downstream.log)
        await until(lambda: "flood line 399" in view.text())
        await until(lambda: downstream.status.state is State.READY)
        bar = view.text_edit.verticalScrollBar()
        bar.setValue(bar.maximum() - 200)  # the user scrolls up
        assert not view.following and not view.follow_button.isChecked()
        top, before = bar.value(), _top_line(view)

        await downstream.call_tool("stderr", {"lines": 100, "text": "while away"})
        await until(lambda: "while away 100" in view.text())
        assert (bar.value(), _top_line(view)) == (top, before)
        assert not view.follow_button.isChecked()

        bar.setValue(bar.maximum())  # back at the bottom
        assert view.following and view.follow_button.isChecked()
        await downstream.call_tool("stderr", {"lines": 100, "text": "back"})
        await until(lambda: view.text_edit.document().lastBlock().text().endswith("back 100"))
        assert _at_bottom(view) and bar.value() > top


async def test_attaching_another_log_leaves_the_old_one(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"first": fixture("--name", "first"), "second": fixture("--name", "second")}
    async with gui_context(tmp_path, servers) as ctx:
        first, second = ctx.engine.downstreams["first"], ctx.engine.downstreams["second"]
        view = _view(qtbot)
        view.attach(first.log)
        await until(lambda: first.status.state is State.READY and second.status.state is State.READY)
        await first.call_tool("stderr", {"lines": 3, "text": "first says"})
        await until(lambda: "first says 3" in view.text())

        view.attach(second.log)
        assert "first says" not in view.text()  # the view shows the new log only
        await first.call_tool("stderr", {"lines": 3, "text": "first again"})
        await second.call_tool("stderr", {"lines": 3, "text": "second says"})
        await until(lambda: first.log.tail(1) == ["first again 3"])  # the old log did get its lines...
        await until(lambda: "second says 3" in view.text())
        view.flush()
        assert "first again" not in view.text()  # ...and they no longer arrive here

        view.attach(None)
        assert view.text() == "" and view.log is None and not view.open_button.isEnabled()
        await second.call_tool("stderr", {"lines": 3, "text": "second again"})
        await until(lambda: second.log.tail(1) == ["second again 3"])
        view.flush()
        assert view.text() == ""


async def test_a_servers_log_messages_reach_its_pane_with_their_level(tmp_path: Path, qtbot: QtBot) -> None:
    # The conformance fixture sends three info messages while its `test_tool_with_logging` runs.
    async with (
        gui_context(tmp_path, {"conf": conformance_fixture()}) as ctx,
        Client(ctx.engine.router.server, mode="legacy", cache=None) as client,
    ):
        view = _view(qtbot)
        view.attach(ctx.engine.downstreams["conf"].log)
        await until(lambda: ctx.engine.downstreams["conf"].status.state is State.READY)
        assert not (await client.call_tool("test_tool_with_logging", {})).is_error
        line = "[log info] conformance-server: Tool execution completed"
        await until(lambda: line in view.text())
        assert [(m.text, m.colour) for m in _marks(view) if m.line == line] == [("[log info]", _INFO)]


# Bare logs fed by hand ---------------------------------------------------------------------------


@pytest.fixture
def log(tmp_path: Path) -> Iterator[StderrLog]:
    made = StderrLog(tmp_path / "logs" / "bare.log")
    yield made
    made.close()


async def test_the_ring_shows_at_once_with_a_time_on_every_line(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["one", "two"])
    view = _view(qtbot)
    view.attach(log)
    stamp = time.strftime("%H:%M:%S", time.localtime(log.lines[0].time))
    assert view.text().splitlines() == [f"{stamp} one", f"{stamp} two"]
    log.add(["three"])
    await until(lambda: view.text().endswith(" three"))
    assert re.fullmatch(r"\d\d:\d\d:\d\d three", view.text().splitlines()[-1])


async def test_more_than_the_view_holds_keeps_the_newest_and_says_how_many_were_skipped(
    qtbot: QtBot, log: StderrLog
) -> None:
    view = _view(qtbot)
    view.attach(log)
    log.add([f"line {i}" for i in range(12_000)])  # one batch, far more than the view holds
    log.add([f"line {i}" for i in range(12_000, 20_000)])
    await until(lambda: view.text().endswith(" line 19999"))
    skipped = 20_000 - PENDING_LINES
    assert view.text_edit.blockCount() == VIEW_LINES
    assert _block(view, 0).endswith(f"… {skipped:,} lines skipped here (see the log file)")
    assert _block(view, 1).endswith(f" line {skipped}")
    assert view.skipped == skipped
    assert len(log.lines) == 2000  # the ring is untouched by the view


async def test_a_full_view_scrolled_up_keeps_the_same_lines_in_view(qtbot: QtBot, log: StderrLog) -> None:
    view = _view(qtbot)
    view.attach(log)
    log.add([f"line {i}" for i in range(VIEW_LINES)])
    view.flush()
    bar = view.text_edit.verticalScrollBar()
    bar.setValue(3000)
    reading = _top_line(view)
    assert reading.endswith(" line 3000") and not view.following
    log.add([f"more {i}" for i in range(1000)])  # pushes out 1,000 lines at once
    await until(lambda: view.text().endswith(" more 999"))
    assert (_top_line(view), bar.value()) == (reading, 2000)
    log.add([f"few {i}" for i in range(100)])  # and 100 more
    await until(lambda: view.text().endswith(" few 99"))
    assert (_top_line(view), bar.value()) == (reading, 1900)
    assert view.text_edit.blockCount() == VIEW_LINES


async def test_following_survives_a_resize(qtbot: QtBot, log: StderrLog) -> None:
    view = _view(qtbot)
    view.attach(log)
    log.add([f"line {i}" for i in range(300)])
    view.flush()
    assert _at_bottom(view)
    tall = view.text_edit.viewport().height()
    view.resize(700, 200)  # fewer rows: the range grows under a scroll bar nobody moved
    await until(lambda: view.text_edit.viewport().height() < tall)
    assert view.following and _at_bottom(view)


async def test_a_selection_survives_lines_pushed_out_above_it(qtbot: QtBot, log: StderrLog) -> None:
    view = _view(qtbot)
    view.attach(log)
    log.add([f"line {i}" for i in range(VIEW_LINES)])
    view.flush()
    cursor = QTextCursor(view.text_edit.document().findBlockByNumber(4000))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    view.text_edit.setTextCursor(cursor)
    log.add([f"more {i}" for i in range(2000)])
    await until(lambda: view.text().endswith(" more 1999"))
    assert view.text_edit.textCursor().selectedText().endswith(" line 4000")


async def test_find_goes_forward_and_back_and_says_not_found(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["alpha one", "beta", "ALPHA two", "gamma"])
    view = _view(qtbot)
    view.attach(log)
    view.activateWindow()
    await until(view.isActiveWindow)
    view.find_field.setFocus()  # Ctrl+F is the window's (test_main_window), the pane is not a window

    def found() -> tuple[int, str]:
        cursor = view.text_edit.textCursor()
        return cursor.blockNumber(), cursor.selectedText()

    qtbot.keyClicks(view.find_field, "alpha")
    qtbot.keyClick(view.find_field, Qt.Key.Key_Return)
    assert found() == (0, "alpha")
    qtbot.keyClick(view.find_field, Qt.Key.Key_Return)
    assert found() == (2, "ALPHA")  # case does not matter
    qtbot.keyClick(view.find_field, Qt.Key.Key_Return)
    assert found() == (0, "alpha")  # wrapped around
    qtbot.keyClick(view.find_field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert found() == (2, "ALPHA")  # backwards, wrapped around
    qtbot.keyClick(view.find_field, Qt.Key.Key_F3)  # F3 and Shift+F3 while the pane has the focus
    assert found() == (0, "alpha")
    qtbot.keyClick(view.find_field, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert found() == (2, "ALPHA")
    assert view.find_status.text() == ""

    view.find_field.setText("delta")
    qtbot.keyClick(view.find_field, Qt.Key.Key_Return)
    assert view.find_status.text() == "not found"
    assert found() == (2, "ALPHA")  # a miss leaves the selection where it was
    view.find_field.setText("gamma")
    assert view.find_status.text() == ""


async def test_copy_takes_the_selection_or_everything_shown(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["first", "second", "third"])
    view = _view(qtbot)
    view.attach(log)
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("stale")
    view.copy_button.click()
    assert clipboard.text() == view.text() and clipboard.text().count("\n") == 2
    cursor = QTextCursor(view.text_edit.document().findBlockByNumber(1))
    cursor.movePosition(QTextCursor.MoveOperation.NextBlock, QTextCursor.MoveMode.KeepAnchor)
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    view.text_edit.setTextCursor(cursor)
    view.copy_button.click()
    assert clipboard.text() == "\n".join(view.text().splitlines()[1:])


async def test_clear_empties_the_view_only(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["before"])
    view = _view(qtbot)
    view.attach(log)
    log.add(["waiting"])  # not yet shown: cleared with the rest
    view.clear_button.click()
    assert view.text() == ""
    assert log.tail(2) == ["before", "waiting"]
    assert log.path is not None and "waiting" in log.path.read_text(encoding="utf-8")
    log.add(["after"])
    await until(lambda: view.text().endswith(" after"))
    assert view.text().count("\n") == 0


async def test_open_log_file_opens_the_file_and_is_off_without_one(qtbot: QtBot, log: StderrLog) -> None:
    view = _view(qtbot)
    view.attach(StderrLog(None))
    assert not view.open_button.isEnabled()
    view.attach(log)  # the log's own file
    assert view.open_button.isEnabled()
    assert not view.open_log_file() and view.find_status.text() == "no log file yet"
    log.add(["written"])

    class Opened(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.urls: list[QUrl] = []

        @Slot(QUrl)
        def open(self, url: QUrl) -> None:
            self.urls.append(url)

    opened = Opened()
    # PySide6's stub wants the slot name as bytes, but bytes is refused at run time: a str it is.
    QDesktopServices.setUrlHandler("file", opened, "open")  # type: ignore[arg-type]
    try:
        view.open_button.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert log.path is not None
    assert [url.toLocalFile() for url in opened.urls] == [str(log.path)]


async def test_the_supervisors_own_lines_stand_out(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["the server speaks"])
    log.note("started pid 42")
    view = _view(qtbot)
    view.attach(log)
    marked = [s.cursor.selectedText() for s in view.text_edit.extraSelections()]
    assert len(marked) == 1 and marked[0].endswith("[mcpmanager] started pid 42")


async def test_detach_keeps_what_is_shown_and_stops_following(qtbot: QtBot, log: StderrLog) -> None:
    log.add(["kept"])
    view = _view(qtbot)
    view.attach(log)
    view.detach()
    log.add(["not shown"])
    view.flush()
    assert view.text().endswith(" kept") and "not shown" not in view.text()


async def test_a_deleted_view_leaves_the_log(qtbot: QtBot, log: StderrLog) -> None:
    view = LogView()
    view.attach(log)
    shiboken6.delete(view)  # as when the page holding it is closed: the log must not call into it
    log.add(["after the view is gone"])  # would raise from inside the stderr pump
    assert log.tail(1) == ["after the view is gone"]


async def test_log_messages_show_their_level_and_warnings_stand_out(qtbot: QtBot, log: StderrLog) -> None:
    # As the supervisor writes a server's notifications/message into its log (downstream `_on_log`).
    log.add(
        [
            "[log debug] db: pool size 4",
            "[log info] app: listening",
            "[log warning] app: disk 91% full",
            "[log error] app: cannot write the cache",
            "[log emergency] app: out of memory",
            "plain stderr [log error] inside",
            "[log loud] app: not a level MCP defines",
        ]
    )
    view = _view(qtbot)
    view.attach(log)
    marks = _marks(view)
    whole = {m.line: (m.colour, m.background) for m in marks if m.whole}
    tags = {m.line: (m.text, m.colour, m.background) for m in marks if not m.whole}
    # Debug is greyed, warnings and errors colour the whole line, each level in its own colour.
    assert whole == {
        "[log debug] db: pool size 4": (_DEBUG, None),
        "[log warning] app: disk 91% full": (_WARNING, None),
        "[log error] app: cannot write the cache": (_ERROR, None),
        "[log emergency] app: out of memory": (_ERROR, None),
    }
    # Info colours its tag only; the gravest levels invert theirs (white on red).
    assert tags == {
        "[log info] app: listening": ("[log info]", _INFO, None),
        "[log emergency] app: out of memory": ("[log emergency]", "#ffffff", _ERROR),
    }
    # A line only seeming to hold a level (not at its start, or not a level) is the server's own text.
    assert not {m.line for m in marks} & {
        "plain stderr [log error] inside",
        "[log loud] app: not a level MCP defines",
    }
