"""The Activity page against a real engine: real calls through the proxy (an SDK client connected in
memory) to a real fixture server appear live, and "make alias" changes the config file so that the
same wrong name resolves as an alias next time."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest
from mcp import Client
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mcpmanager.core.proxy.activity import Activity, CallRecord, Outcome
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.activity_model import (
    CALLED,
    DETAIL,
    DURATION,
    HEADERS,
    HOW,
    OUTCOME_COLOURS,
    RESOLVED,
    RESULT,
    TIME,
    VIA,
    ActivityModel,
)
from mcpmanager.gui.activity_page import KEY_ROLE, ActivityPage
from mcpmanager.gui.context import GuiContext
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

DELETE_FILE = {
    "name": "delete_file",
    "description": "Delete a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "annotations": {"destructiveHint": True},
}
SEARCH_CODE = {
    "name": "search_code",
    "description": "Search code.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
}


@pytest.fixture
def servers(tmp_path: Path) -> dict[str, Any]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([SEARCH_CODE, DELETE_FILE]))
    return {"alpha": fixture("--name", "alpha", "--tools-file", str(tools), "--log-calls")}


async def ready(ctx: GuiContext) -> None:
    await until(lambda: ctx.engine.downstreams["alpha"].status.state is State.READY)


def row(model: ActivityModel, called: str, nth: int = -1) -> list[str]:
    """The shown cells of the `nth` row whose call was `called`."""
    rows = [r for r in range(model.rowCount()) if model.index(r, CALLED).data() == called]
    return [model.index(rows[nth], column).data() for column in range(len(HEADERS))]


def finished(model: ActivityModel, count: int) -> bool:
    records = model.records()
    return len(records) == count and all(r.outcome != "pending" for r in records)


def aliases_in_file(ctx: GuiContext, key: str) -> list[str]:
    document = json.loads(ctx.control.path.read_text(encoding="utf-8"))
    return list(document.get("tools", {}).get(key, {}).get("aliases", []))


async def test_calls_appear_live_with_their_columns(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = ActivityPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)
        async with Client(ctx.engine.router.server) as client:
            await client.call_tool("call_tool", {"tool_name": "ECHO", "arguments": {"text": "hi"}})
            await client.call_tool("searchCode", {"q": "def main"})
            await client.call_tool("echo", {"text": "x", "append": True})
            await client.call_tool("send_email", {"to": "a@b.c"})
            await client.call_tool("call_tool", {"tool_name": "fail", "arguments": {"message": "boom\nmore"}})
            await client.call_tool("echo", {"text": "plain"})
        model = page.model
        await until(lambda: finished(model, 6))

        assert row(model, "ECHO")[CALLED:DURATION] == ["ECHO", "call_tool", "echo [alpha]", "normalized"]
        assert row(model, "searchCode")[VIA:DURATION] == ["direct", "search_code [alpha]", "normalized; q→query"]
        refused = row(model, "echo", 0)
        assert refused[RESOLVED:DURATION] + refused[RESULT:] == [
            "echo [alpha]",
            "exact",
            "refused",
            "",  # not asked before the call
            "Not called: the arguments for 'echo' need fixing (nothing was sent to the server).",
        ]
        unknown = row(model, "send_email")
        assert unknown[RESOLVED:DURATION] == ["", ""] and unknown[RESULT] == "unknown"
        assert unknown[DETAIL].startswith("Unknown tool 'send_email'.")
        assert row(model, "fail")[RESULT:] == ["error", "", "boom"]  # the first line only
        results = [model.index(r, RESULT).data() for r in range(model.rowCount())]
        assert results == ["ok", "ok", "refused", "unknown", "error", "ok"]

        first = model.records()[0]
        assert row(model, "ECHO")[TIME] == time.strftime("%H:%M:%S", time.localtime(first.started))
        assert all(re.fullmatch(r"\d+(\.\d)? ms", row(model, name)[DURATION]) for name in ("ECHO", "fail"))
        error_row = results.index("error")
        assert model.index(error_row, RESULT).data(Qt.ItemDataRole.ForegroundRole) == QColor(OUTCOME_COLOURS["error"])

        # "Only resolved or failed" hides the one plain exact call that went through.
        page.only_repaired.setChecked(True)
        assert page.proxy.rowCount() == 5
        shown = [page.proxy.index(r, CALLED).data() for r in range(page.proxy.rowCount())]
        assert shown == ["ECHO", "searchCode", "echo", "send_email", "fail"]
        page.only_repaired.setChecked(False)
        page.filter.setText("search")
        assert [page.proxy.index(r, CALLED).data() for r in range(page.proxy.rowCount())] == ["searchCode"]
        page.filter.clear()

        # Make alias: on a repaired or unknown name, not on an exact one.
        enabled = {}
        for record in model.records():
            assert page.select_call(record.id)
            enabled[(record.called, record.outcome)] = page.alias_button.isEnabled()
        assert enabled == {
            ("ECHO", "ok"): True,
            ("searchCode", "ok"): True,
            ("echo", "refused"): False,
            ("send_email", "unknown"): True,
            ("fail", "error"): False,
            ("echo", "ok"): False,
        }

        qtmodeltester.check(page.model)
        qtmodeltester.check(page.proxy)
        # A model made now starts from the engine's records, with the same rows.
        later = ActivityModel(ctx.engine.router.activity)
        assert later.records() == model.records()
        qtmodeltester.check(later)

        # Clear view empties the table, not the engine's log.
        assert page.select_call(model.records()[0].id) and page.alias_button.isEnabled()
        page.clear_button.click()
        assert model.rowCount() == 0 and not page.alias_button.isEnabled()
        assert len(ctx.engine.router.activity.records()) == 6


async def test_a_pending_call_updates_its_own_row(tmp_path: Path, servers: dict[str, Any], qtbot: QtBot) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = ActivityPage(ctx)
        qtbot.addWidget(page)
        model = page.model
        inserted: list[int] = []
        changed: list[int] = []
        model.rowsInserted.connect(lambda _parent, first, last: inserted.append(last - first + 1))
        model.dataChanged.connect(lambda top, _bottom, _roles: changed.append(top.row()))
        await ready(ctx)
        async with Client(ctx.engine.router.server) as client, anyio.create_task_group() as tasks:
            tasks.start_soon(client.call_tool, "call_tool", {"tool_name": "Sleep", "arguments": {"seconds": 1.5}})
            await until(lambda: model.rowCount() == 1 and model.index(0, RESOLVED).data() == "sleep [alpha]")
            assert model.index(0, RESULT).data() == "pending" and model.index(0, DURATION).data() == ""
            assert model.index(0, HOW).data() == "normalized"
            pending = model.records()[0]
            await until(lambda: model.index(0, RESULT).data() == "ok")
        assert model.rowCount() == 1 and sum(inserted) == 1
        assert model.records()[0].id == pending.id and changed and set(changed) == {0}
        assert model.index(0, DURATION).data().endswith(" ms")


async def test_make_alias_on_a_resolved_row_asks_through_the_chooser(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot
) -> None:
    """A repair can be wrong, so the user confirms the tool: the chooser, with the one it resolved to first."""
    async with gui_context(tmp_path, servers) as ctx:
        page = ActivityPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)
        async with Client(ctx.engine.router.server) as client:
            await client.call_tool("ECHO", {"text": "one"})
            await until(lambda: finished(page.model, 1))
            assert page.model.records()[0].how == "normalized"
            assert page.select_call(page.model.records()[0].id) and page.alias_button.isEnabled()
            before = ctx.control.path.read_bytes()
            page.alias_button.click()
            chooser = page.chooser
            assert chooser is not None and chooser.isVisible(), "saved without asking"
            assert chooser.shown.index(0, 0).data() == "echo  [alpha]  — what it resolved to (normalized)"
            keys = [chooser.shown.index(r, 0).data(KEY_ROLE) for r in range(chooser.shown.rowCount())]
            assert sorted(keys) == sorted(t.key for t in ctx.engine.catalogue.tools())  # any tool can be chosen
            assert chooser.selected_key() == "alpha:echo"
            assert ctx.control.path.read_bytes() == before  # nothing saved while the user chooses
            chooser.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
            assert not chooser.isVisible() and page.chooser is None
            await until(lambda: aliases_in_file(ctx, "alpha:echo") == ["ECHO"])
            await until(lambda: ctx.engine.catalogue.find("alpha", "echo").aliases == ("ECHO",))  # type: ignore[union-attr]
            await until(lambda: page.message.text() == "'ECHO' is now an alias of echo [alpha].")
            result = await client.call_tool("ECHO", {"text": "two"})
            assert not result.is_error
        await until(lambda: finished(page.model, 2))
        assert row(page.model, "ECHO")[RESOLVED:DURATION] == ["echo [alpha]", "alias"]
        assert row(page.model, "ECHO")[RESULT] == "ok"
        # An alias is not offered again on a call that already used it.
        assert page.select_call(page.model.records()[1].id) and not page.alias_button.isEnabled()
        assert ctx.errors.problems == []


async def test_make_alias_on_an_unknown_name_through_the_chooser(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot
) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = ActivityPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)
        async with Client(ctx.engine.router.server) as client:
            await client.call_tool("remove_file", {"path": "/a"})
            await client.call_tool("repeat_text", {"text": "x"})
            await until(lambda: finished(page.model, 2))
            withheld, record = page.model.records()
            assert withheld.outcome == record.outcome == "unknown"

            # The closest tool destroys: offered first, but the user has to pick it.
            assert page.select_call(withheld.id) and page.alias_button.isEnabled()
            page.alias_button.click()
            chooser = page.chooser
            assert chooser is not None and chooser.isVisible()
            assert chooser.shown.index(0, 0).data() == "delete_file  [alpha]  — closest, but it can destroy data"
            assert chooser.selected_key() is None
            assert not chooser.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
            chooser.reject()
            assert page.chooser is None

            assert page.select_call(record.id) and page.alias_button.isEnabled()
            page.alias_button.click()
            chooser = page.chooser
            assert chooser is not None and chooser.isVisible()
            # The resolver's suggestion first, then the whole catalogue.
            keys = [chooser.shown.index(r, 0).data(KEY_ROLE) for r in range(chooser.shown.rowCount())]
            assert keys[0] == "alpha:echo"
            assert chooser.shown.index(0, 0).data() == "echo  [alpha]  — suggested"
            assert sorted(keys) == sorted(t.key for t in ctx.engine.catalogue.tools())
            assert chooser.selected_key() == "alpha:echo"  # the best guess is preselected
            chooser.filter.setText("WHOAMI")
            assert chooser.shown.rowCount() == 1 and chooser.selected_key() == "alpha:whoami"
            chooser.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
            assert not chooser.isVisible()
            await until(lambda: aliases_in_file(ctx, "alpha:whoami") == ["repeat_text"])
            await until(lambda: ctx.engine.router.resolver.resolve("repeat_text").how == "alias")
            result = await client.call_tool("repeat_text", {})
            assert not result.is_error
        await until(lambda: finished(page.model, 3))
        assert row(page.model, "repeat_text")[RESOLVED:DURATION] == ["whoami [alpha]", "alias"]
        assert aliases_in_file(ctx, "alpha:echo") == [] and aliases_in_file(ctx, "alpha:delete_file") == []
        assert ctx.errors.problems == []


def calls(activity: Activity, *names: str) -> list[CallRecord]:
    """Calls begun and finished on a real Activity, reported as the proxy reports them."""
    reported: list[CallRecord] = []
    for name in names:
        record = activity.begin(name, "direct")
        reported += [record, activity.update(record, outcome="ok")]
    return reported


async def test_the_table_is_bounded_and_clearing_it_keeps_old_calls_away(qtmodeltester: ModelTester) -> None:
    activity = Activity(size=3)
    model = ActivityModel(activity)
    removed: list[tuple[int, int]] = []
    model.rowsRemoved.connect(lambda _parent, first, last: removed.append((first, last)))
    model.apply(calls(activity, "a", "b"))
    model.apply(calls(activity, "c", "d"))
    assert [r.called for r in model.records()] == ["b", "c", "d"]
    assert removed == [(0, 0)]  # the oldest row went first
    qtmodeltester.check(model)
    model.apply(calls(activity, "e", "f", "g", "h"))  # more than fit at once: the newest three
    assert [r.called for r in model.records()] == ["f", "g", "h"]
    assert all(model.row_of(r.id) == i for i, r in enumerate(model.records()))

    pending = activity.begin("still_running", "direct")
    model.apply([pending])
    model.clear()
    assert model.rowCount() == 0
    model.apply([activity.update(pending, outcome="ok"), *calls(activity, "i")])
    assert [r.called for r in model.records()] == ["i"]  # the cleared call stays cleared
    assert [r.called for r in activity.records()] == ["h", "still_running", "i"]  # only the view was cleared


async def test_the_view_follows_the_newest_row_until_scrolled_away(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot
) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = ActivityPage(ctx)
        qtbot.addWidget(page)
        page.resize(700, 300)
        page.show()
        activity, bar = ctx.engine.router.activity, page.view.verticalScrollBar()

        def add(count: int) -> None:
            for i in range(count):
                activity.update(activity.begin(f"call_{i}", "direct"), outcome="unknown")

        add(60)
        await until(lambda: page.model.rowCount() == 60 and bar.maximum() > 0)
        await until(lambda: bar.value() == bar.maximum())
        bar.setValue(0)  # the user scrolls up to read
        add(20)
        await until(lambda: page.model.rowCount() == 80)
        assert bar.value() == 0 and bar.maximum() > 0
        bar.setValue(bar.maximum())  # and back down: following again
        add(20)
        await until(lambda: page.model.rowCount() == 100)
        await until(lambda: bar.value() == bar.maximum())


async def test_a_cancelled_call_reads_cancelled_with_its_duration_and_a_colour(qtmodeltester: ModelTester) -> None:
    activity = Activity()
    model = ActivityModel(activity)
    record = activity.begin("sleep", "direct", server="a", tool="sleep")
    model.apply([record, activity.update(record, outcome="cancelled", duration=2.5)])
    assert model.index(0, RESULT).data() == "cancelled" and model.index(0, DURATION).data() == "2500 ms"
    assert model.index(0, RESULT).data(Qt.ItemDataRole.ForegroundRole) == QColor(OUTCOME_COLOURS["cancelled"])
    assert set(OUTCOME_COLOURS) == set(get_args(Outcome))  # every outcome has its colour
    qtmodeltester.check(model)
