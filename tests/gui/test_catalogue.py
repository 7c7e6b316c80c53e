"""The Catalogue page on real parts: the model and its filter under Qt's model tester, filtering as a
user types, and changes made in the table and the detail panel reaching the config file, the running
engine and a real SDK client connected to the proxy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mcpmanager.core.catalogue.catalogue import Catalogue, ToolEntry
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.settings import ToolSettings
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.catalogue_filter import CatalogueFilter
from mcpmanager.gui.catalogue_model import (
    ALIASES,
    ALWAYS_ON,
    ENABLED,
    KEY_ROLE,
    NAME,
    SORT_ROLE,
    TOKENS,
    CatalogueModel,
)
from mcpmanager.gui.catalogue_page import CataloguePage
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.main_window import MainWindow
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "catalogues" / "published.json"
BUILTINS = 7  # echo, add, fail, slow, sleep, whoami, stderr: every fixture server has them
CHECK = Qt.ItemDataRole.CheckStateRole


def published(server: str) -> list[dict[str, Any]]:
    tools = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    return [{k: v for k, v in t.items() if k != "server"} for t in tools if t["server"] == server]


def on_disk(ctx: GuiContext) -> dict[str, Any]:
    return json.loads(ctx.control.path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def tool_settings(ctx: GuiContext, key: str) -> dict[str, Any]:
    return on_disk(ctx).get("tools", {}).get(key, {})  # type: ignore[no-any-return]


def shown_keys(page: CataloguePage) -> set[str]:
    return {page.rows.index(r, NAME).data(KEY_ROLE) for r in range(page.rows.rowCount())}


def expected_keys(entries: list[ToolEntry], query: str) -> set[str]:
    """The rule, written out again: every word somewhere in a name, the server or the description."""
    words = query.lower().split()

    def fields(e: ToolEntry) -> list[str]:
        return [f.lower() for f in (e.exposed or e.name, e.name, e.server, e.description, *e.settings.aliases)]

    return {e.key for e in entries if all(any(w in f for f in fields(e)) for w in words)}


def cell(page: CataloguePage, key: str, column: int) -> QModelIndex:
    row = page.model.row_of(key)
    assert row >= 0, f"{key} is not in the model"
    return page.rows.mapFromSource(page.model.index(row, column))


async def ready(ctx: GuiContext, page: CataloguePage, tools: int) -> None:
    await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()))
    await until(lambda: page.model.rowCount() == tools)


@asynccontextmanager
async def client_of(ctx: GuiContext) -> AsyncIterator[tuple[Client, list[object]]]:
    """A real SDK client on the proxy, in memory, handshake era; collects tools/list_changed."""
    changed: list[object] = []

    async def notes(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message)

    async with Client(ctx.engine.router.server, mode="legacy", message_handler=notes, cache=None) as client:
        yield client, changed


async def listed(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


# The model and the filter under Qt's model tester ----------------------------------------------------


def _catalogue() -> tuple[Catalogue, list[str], dict[str, ToolSettings]]:
    tools: dict[str, list[dict[str, Any]]] = {}
    for tool in json.loads(PUBLISHED.read_text(encoding="utf-8")):
        tools.setdefault(tool["server"], []).append({k: v for k, v in tool.items() if k != "server"})
    servers = list(tools)
    settings = {"github:create_issue": ToolSettings(disabled=True), "git:git_status": ToolSettings(always_on=True)}
    catalogue = Catalogue(None)
    catalogue.configure(servers, settings)
    catalogue.load(tools)
    return catalogue, servers, settings


@pytest.mark.qt_log_level_fail("WARNING")  # the C++ tester reports through qWarning
@pytest.mark.parametrize("tested", ["model", "proxy"])
async def test_model_and_filter_pass_the_model_tester(tested: str, qtmodeltester: ModelTester) -> None:
    catalogue, servers, settings = _catalogue()
    model = CatalogueModel(catalogue.entries)
    rows = CatalogueFilter()
    rows.setSourceModel(model)
    assert model.rowCount() == len(catalogue.entries()) > 500
    qtmodeltester.check(model if tested == "model" else rows)
    # Every kind of change, each checked by the tester as it happens.
    for query in ("issue", "create issue", "create issue github", "zzz nothing", ""):
        rows.set_query(query)
    rows.set_query("git")
    rows.sort(TOKENS, Qt.SortOrder.DescendingOrder)
    tokens = [rows.index(r, TOKENS).data(SORT_ROLE) for r in range(rows.rowCount())]
    assert tokens == sorted(tokens, reverse=True) and tokens[0] > tokens[-1]
    catalogue.configure(servers, {**settings, "git:git_log": ToolSettings(always_on=True, aliases=["history"])})
    model.refresh()  # the same tools: dataChanged
    assert rows.index(0, 0).isValid()
    catalogue.configure(servers[1:], settings)  # a server went: a reset
    model.refresh()
    rows.sort(-1)
    rows.set_query("")
    assert model.rowCount() == rows.rowCount() == len(catalogue.entries())


async def test_rows_show_what_the_engine_says() -> None:
    catalogue, servers, settings = _catalogue()
    model = CatalogueModel(catalogue.entries)
    disabled = model.index(model.row_of("github:create_issue"), NAME)
    assert disabled.data() == "create_issue"  # no exposed name while disabled: the server's own
    assert disabled.data(Qt.ItemDataRole.ForegroundRole) is not None  # dimmed
    assert disabled.siblingAtColumn(ENABLED).data(CHECK) == Qt.CheckState.Unchecked
    pinned = model.index(model.row_of("git:git_status"), ALWAYS_ON)
    assert pinned.data(CHECK) == Qt.CheckState.Checked
    assert pinned.siblingAtColumn(NAME).data(Qt.ItemDataRole.ForegroundRole) is None
    assert model.flags(pinned) & Qt.ItemFlag.ItemIsUserCheckable
    assert not model.flags(pinned.siblingAtColumn(NAME)) & Qt.ItemFlag.ItemIsUserCheckable
    # Without a way to change anything (no engine), a toggle is refused and nothing changes.
    assert not model.setData(pinned, Qt.CheckState.Unchecked, CHECK)
    assert pinned.data(CHECK) == Qt.CheckState.Checked
    # A refresh with the same tools repaints only the rows that changed.
    changed: list[tuple[int, int]] = []
    resets: list[bool] = []
    model.dataChanged.connect(lambda first, last: changed.append((first.row(), last.row())))
    model.modelReset.connect(lambda: resets.append(True))
    catalogue.configure(servers, {**settings, "git:git_log": ToolSettings(aliases=["history"])})
    model.refresh()
    row = model.row_of("git:git_log")
    assert changed == [(row, row)] and not resets
    assert model.index(row, ALIASES).data() == "history"


# Filtering ---------------------------------------------------------------------------------------------


async def test_the_filter_agrees_with_the_rule_through_any_edits() -> None:
    """Narrowing, remembered answers and model changes must never show other rows than the rule says."""
    catalogue, servers, settings = _catalogue()
    model = CatalogueModel(catalogue.entries)
    rows = CatalogueFilter()
    rows.setSourceModel(model)

    def check(query: str) -> None:
        rows.set_query(query)
        shown = {rows.index(r, NAME).data(KEY_ROLE) for r in range(rows.rowCount())}
        assert shown == expected_keys(catalogue.entries(), query), query

    typed = "get issue jira"
    for end in [*range(1, len(typed) + 1), *range(len(typed), -1, -1)]:
        check(typed[:end])
    for query in ("jira issue", "issue", "ISSUE Jira", "sue ji", "get  get", "zz", "z", "", "e e e", "create_"):
        check(query)
    # The rows change under a query: an alias makes a tool match, a sort moves every row.
    check("frobnicate")
    catalogue.configure(servers, {**settings, "git:git_log": ToolSettings(aliases=["frobnicate"])})
    model.refresh()
    assert {rows.index(r, NAME).data(KEY_ROLE) for r in range(rows.rowCount())} == {"git:git_log"}
    model.sort(NAME, Qt.SortOrder.AscendingOrder)
    check("frobnicat")
    check("git")
    # Changed while no query was active: an answer remembered from before must not come back.
    check("quuxify")
    check("")
    catalogue.configure(servers, {**settings, "git:git_status": ToolSettings(aliases=["quuxify"])})
    model.refresh()
    check("quuxify")
    catalogue.configure(servers[2:], settings)  # servers gone: a reset
    model.refresh()
    check("gi")
    check("git status")


async def test_filter_as_you_type(tmp_path: Path, qtbot: QtBot) -> None:
    # Real GitHub and GitLab tools, on servers named so that a word can match the server name only.
    (tmp_path / "octo.json").write_text(json.dumps(published("github")), encoding="utf-8")
    (tmp_path / "tanuki.json").write_text(json.dumps(published("gitlab")), encoding="utf-8")
    servers = {
        "octo": fixture("--name", "octo", "--tools-file", str(tmp_path / "octo.json")),
        "tanuki": fixture("--name", "tanuki", "--tools-file", str(tmp_path / "tanuki.json")),
    }
    async with gui_context(tmp_path, servers) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.resize(1000, 600)
        page.show()
        total = 2 * BUILTINS + len(published("github")) + len(published("gitlab"))
        await ready(ctx, page, total)
        entries = ctx.engine.catalogue.entries()
        assert page.count.text() == f"{total} tools"

        async def typed(query: str) -> set[str]:
            await until(lambda: page.rows.words == tuple(query.lower().split()))
            shown = shown_keys(page)
            assert shown == expected_keys(entries, query), query
            assert page.count.text() == (f"{len(shown)} of {total} tools" if query else f"{total} tools")
            return shown

        page.filter.setFocus()
        qtbot.keyClicks(page.filter, "issue")
        issue = await typed("issue")
        assert {"octo:create_issue", "tanuki:create_issue", "octo:list_issues"} <= issue < shown_keys_all(entries)
        qtbot.keyClicks(page.filter, " create")
        both = await typed("issue create")
        assert both == {"octo:create_issue", "tanuki:create_issue"}  # AND: both words
        qtbot.keyClicks(page.filter, " TANUKI")  # only the server's name says it; any case
        assert await typed("issue create tanuki") == {"tanuki:create_issue"}
        qtbot.keyClick(page.filter, Qt.Key.Key_Escape)
        assert page.filter.text() == ""
        assert await typed("") == shown_keys_all(entries)
        qtbot.keyClicks(page.filter, "octo__ech")  # an exposed name
        assert await typed("octo__ech") == {"octo:echo"}
        qtbot.keyClicks(page.filter, " qqqq")
        assert await typed("octo__ech qqqq") == set()
        for _ in range(5):  # backspace back to the earlier answer
            qtbot.keyClick(page.filter, Qt.Key.Key_Backspace)
        assert await typed("octo__ech") == {"octo:echo"}
        qtbot.keyClick(page.filter, Qt.Key.Key_Down)  # on into the table: the first match is selected
        assert page.selected_key() == "octo:echo" and page.detail.title.text() == "octo__echo"
        qtbot.keyClicks(page.filter, " qqqq")  # the selected tool filtered out: the detail stays
        assert await typed("octo__ech qqqq") == set()
        assert not page.table.currentIndex().isValid() and page.detail.title.text() == "octo__echo"
        for _ in range(5):
            qtbot.keyClick(page.filter, Qt.Key.Key_Backspace)
        await typed("octo__ech")  # back in: selected again
        assert page.rows.mapToSource(page.table.currentIndex()).row() == page.model.row_of("octo:echo")
        qtbot.keyClick(page.filter, Qt.Key.Key_Escape)
        await typed("")
        assert page.selected_key() == "octo:echo"  # still selected once every row is back
        assert page.rows.mapToSource(page.table.currentIndex()).row() == page.model.row_of("octo:echo")


def shown_keys_all(entries: list[ToolEntry]) -> set[str]:
    return {e.key for e in entries}


# Changes reach the config file, the engine and a connected client ------------------------------------


def check_box_centre(page: CataloguePage, index: QModelIndex) -> QPoint:
    """Where a user clicks to toggle a checkable cell, as the delegate itself computes it."""
    option = QStyleOptionViewItem()
    option.rect = page.table.visualRect(index)
    option.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    option.state |= QStyle.StateFlag.State_Enabled
    option.checkState = Qt.CheckState(index.data(CHECK))
    rect = page.table.style().subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, option, page.table)
    return rect.center()


async def test_always_on_is_saved_and_a_client_hears_of_it(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta")}
    async with gui_context(tmp_path, servers) as ctx, client_of(ctx) as (client, changed):
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.resize(1000, 600)
        page.show()
        await ready(ctx, page, 2 * BUILTINS)
        assert "alpha__echo" not in await listed(client)
        repainted: list[tuple[int, int]] = []
        page.model.dataChanged.connect(lambda first, last: repainted.append((first.row(), last.row())))

        index = cell(page, "alpha:echo", ALWAYS_ON)
        assert page.rows.setData(index, Qt.CheckState.Checked, CHECK)
        assert index.data(CHECK) == Qt.CheckState.Unchecked  # not before the engine has it
        await until(lambda: tool_settings(ctx, "alpha:echo").get("alwaysOn") is True)
        await until(lambda: changed)
        assert "alpha__echo" in await listed(client)
        await until(lambda: cell(page, "alpha:echo", ALWAYS_ON).data(CHECK) == Qt.CheckState.Checked)
        row = page.model.row_of("alpha:echo")
        assert set(repainted) == {(row, row)}  # that row only, no reset

        # Unchecked with the mouse, where the check box is drawn.
        index = cell(page, "alpha:echo", ALWAYS_ON)
        page.table.scrollTo(index)
        qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=check_box_centre(page, index))
        await until(lambda: len(changed) >= 2)
        assert "alpha__echo" not in await listed(client)
        assert tool_settings(ctx, "alpha:echo").get("alwaysOn", False) is False
        await until(lambda: cell(page, "alpha:echo", ALWAYS_ON).data(CHECK) == Qt.CheckState.Unchecked)


async def test_a_disabled_tool_stays_listed_dimmed_and_comes_back(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta")}
    async with gui_context(tmp_path, servers) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.show()
        await ready(ctx, page, 2 * BUILTINS)
        assert page.select_key("beta:echo")
        # Space on the Enabled cell, as a keyboard user toggles it.
        page.table.setCurrentIndex(cell(page, "beta:echo", ENABLED))
        page.table.setFocus()
        qtbot.keyClick(page.table, Qt.Key.Key_Space)
        await until(lambda: tool_settings(ctx, "beta:echo").get("disabled") is True)
        await until(lambda: cell(page, "beta:echo", ENABLED).data(CHECK) == Qt.CheckState.Unchecked)
        assert ctx.engine.catalogue.find("beta", "echo") is None
        name = cell(page, "beta:echo", NAME)
        assert name.data() == "echo" and name.data(Qt.ItemDataRole.ForegroundRole) is not None
        assert page.model.rowCount() == 2 * BUILTINS  # the row stays
        # alpha's echo no longer clashes: it takes the plain name, and its row says so.
        await until(lambda: cell(page, "alpha:echo", NAME).data() == "echo")
        assert page.selected_key() == "beta:echo" and "Disabled" in page.detail.state.text()

        # Enabled again from the row's context menu.
        page.table.customContextMenuRequested.emit(page.table.visualRect(cell(page, "beta:echo", NAME)).center())
        menu = page.context_menu
        assert menu is not None
        enabled = next(a for a in menu.actions() if a.text() == "Enabled")
        assert enabled.isCheckable() and not enabled.isChecked()
        enabled.trigger()
        menu.close()
        await until(lambda: ctx.engine.catalogue.find("beta", "echo") is not None)
        assert load_config(ctx.control.path).tools["beta:echo"].disabled is False
        await until(lambda: cell(page, "beta:echo", NAME).data() == "beta__echo")
        assert cell(page, "beta:echo", NAME).data(Qt.ItemDataRole.ForegroundRole) is None


async def test_aliases_and_parameter_aliases_from_the_detail(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta")}
    async with gui_context(tmp_path, servers) as ctx, client_of(ctx) as (client, _):
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.show()
        await ready(ctx, page, 2 * BUILTINS)
        assert page.select_key("alpha:echo")
        detail = page.detail
        assert detail.title.text() == "alpha__echo"
        detail.copy.click()
        template = json.loads(QGuiApplication.clipboard().text())
        assert template == {"tool_name": "alpha__echo", "arguments": {"text": "<text>"}}

        detail.aliases.setText("my_alias, say ,")
        qtbot.keyClick(detail.aliases, Qt.Key.Key_Return)
        await until(lambda: tool_settings(ctx, "alpha:echo").get("aliases") == ["my_alias", "say"])
        await until(lambda: cell(page, "alpha:echo", ALIASES).data() == "my_alias, say")
        resolved = ctx.engine.router.resolver.resolve("my_alias").tool
        assert resolved is not None and resolved.key == "alpha:echo"
        assert not detail.aliases_apply.isEnabled()  # saved: nothing left to apply

        # Without a parameter alias, `message` is refused; with message → text it reaches `text`.
        call = {"tool_name": "alpha__echo", "arguments": {"message": "hi"}}
        assert (await client.call_tool("call_tool", call)).is_error
        detail.params.add_button.click()
        assert detail.params.rows() == [("", "text")]  # the combo offers the declared parameters
        detail.params.set_row(0, "message", "text")
        detail.params.apply_button.click()
        await until(lambda: tool_settings(ctx, "alpha:echo").get("params") == {"message": "text"})
        await until(lambda: not detail.params.apply_button.isEnabled())  # the engine has it: nothing to apply
        result = await client.call_tool("call_tool", call)
        assert not result.is_error and "hi" in str(result.content)

        # An alias that is another tool's name: refused, said on the error bar, nothing changed.
        before = ctx.control.path.read_bytes()
        problems = len(ctx.errors.problems)
        detail.aliases.setText("my_alias, beta__echo")
        detail.aliases_apply.click()
        await until(lambda: len(ctx.errors.problems) > problems)
        assert "already the name of beta:echo" in ctx.errors.problems[-1].title
        assert ctx.control.path.read_bytes() == before
        assert detail.aliases.text() == "my_alias, beta__echo" and detail.aliases_apply.isEnabled()  # kept to fix
        assert cell(page, "alpha:echo", ALIASES).data() == "my_alias, say"
        qtbot.keyClick(detail.aliases, Qt.Key.Key_Escape)  # back to what is saved
        assert detail.aliases.text() == "my_alias, say"


async def test_the_selection_survives_reloads_and_sorting(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta")}
    async with gui_context(tmp_path, servers) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.show()
        await ready(ctx, page, 2 * BUILTINS)
        assert page.select_key("beta:add")
        page.table.sortByColumn(NAME, Qt.SortOrder.DescendingOrder)
        names = [page.rows.index(r, NAME).data() for r in range(page.rows.rowCount())]
        assert names == sorted(names, key=str.casefold, reverse=True)
        assert page.rows.mapToSource(page.table.currentIndex()).row() == page.model.row_of("beta:add")
        resets: list[bool] = []
        page.model.modelReset.connect(lambda: resets.append(True))
        await ctx.control.set_enabled("alpha", False)  # alpha's tools go: a bulk reload
        await until(lambda: page.model.rowCount() == BUILTINS)
        assert resets
        current = page.table.currentIndex()
        assert current.isValid() and page.rows.mapToSource(current).row() == page.model.row_of("beta:add")
        assert page.selected_key() == "beta:add" and page.detail.title.text() == "add"  # no clash left


async def test_the_call_templates_copy_button_is_in_sight_at_the_default_size(tmp_path: Path, qtbot: QtBot) -> None:
    """A schema's long lines made the pane scroll sideways, and the Copy button went with them."""
    tools = tmp_path / "git.json"
    tools.write_text(json.dumps(published("git")))
    async with gui_context(tmp_path, {"git": fixture("--name", "git", "--tools-file", str(tools))}) as ctx:
        window = MainWindow(ctx)  # at its default size
        qtbot.addWidget(window)
        window.show()
        window.show_page(window.catalogue)
        page, detail = window.catalogue, window.catalogue.detail
        await ready(ctx, page, BUILTINS + len(published("git")))
        copy = detail.copy

        def laid_out() -> bool:  # layouts follow a new text on a later pass of the loop
            return detail.schema.width() >= detail.schema.sizeHint().width()

        for key in ("git:git_log", "git:git_branch", "git:echo"):  # the two widest schemas, and a narrow one
            assert page.select_key(key)
            await until(laid_out, timeout=5)
            assert copy.isVisible() and copy.visibleRegion().boundingRect() == copy.rect(), key
            copy.click()
            assert QGuiApplication.clipboard().text() == detail.template.text()
            assert json.loads(detail.template.text())["tool_name"] == key.partition(":")[2]
