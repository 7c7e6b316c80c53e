"""Prompts, resources and resource templates in the window, from real servers: two conformance fixture
servers (their prompts clash, their resources are the same URIs) and a fixture server that offers
tools only. The catalogue lists them beside the tools under the names clients use (checked with a
real client on the proxy), filters them by kind, shows their detail, keeps tool-only actions for
tools, and follows a server going; the server detail counts and lists them."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
from mcp import Client
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QTreeWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.catalogue_model import ALWAYS_ON, ENABLED, KEY_ROLE, KIND, NAME, SERVER, TOKENS
from mcpmanager.gui.catalogue_page import CataloguePage
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.servers_page import ServersPage
from tests.helpers.conformance import conformance_fixture
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

SERVERS = {"conf-a": conformance_fixture(), "conf-b": conformance_fixture(), "plain": fixture("--name", "plain")}
PROMPTS = ["test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource"]
PROMPTS += ["test_prompt_with_image", "test_input_required_result_prompt"]
RESOURCES = ["test://static-text", "test://static-binary", "test://watched-resource"]
TEMPLATE = "test://template/{id}/data"
CHECK = Qt.ItemDataRole.CheckStateRole


def rows_of(page: CataloguePage) -> list[tuple[str, str, str]]:
    """(kind, name, server) of every row shown, in the table's order."""
    rows = page.rows
    return [
        (rows.index(r, KIND).data(), rows.index(r, NAME).data(), rows.index(r, SERVER).data())
        for r in range(rows.rowCount())
    ]


def key_of(page: CataloguePage, kind: str, name: str) -> str:
    """The key of the row of `kind` shown as `name`."""
    for row in range(page.model.rowCount()):
        index = page.model.index(row, NAME)
        if index.data() == name and index.siblingAtColumn(KIND).data() == kind:
            return str(index.data(KEY_ROLE))
    raise AssertionError(f"no {kind} {name} in the catalogue")


def cell(page: CataloguePage, key: str, column: int) -> QModelIndex:
    return page.model.index(page.model.row_of(key), column)


async def ready(ctx: GuiContext, page: CataloguePage) -> None:
    """Every server ready and its offers in the table (both conformance servers: their prompts clash)."""
    await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()))
    await until(lambda: all(ctx.engine.offerings.server_offers(name) is not None for name in SERVERS))
    await until(lambda: [kind for kind, _, _ in rows_of(page)].count("prompt") == 2 * len(PROMPTS))
    tools = sum(len(d.tools or []) for d in ctx.engine.downstreams.values())
    await until(lambda: [kind for kind, _, _ in rows_of(page)].count("tool") == tools)


def tab_titles(page: ServersPage) -> list[str]:
    return [page.detail.tabs.tabText(i) for i in range(page.detail.tabs.count())]


def names_in(tree: QTreeWidget) -> list[str]:
    return [item.text(0) for i in range(tree.topLevelItemCount()) if (item := tree.topLevelItem(i)) is not None]


async def test_prompts_and_resources_stand_beside_the_tools(
    tmp_path: Path, qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.resize(1100, 700)
        page.show()
        await ready(ctx, page)
        shown = rows_of(page)
        # Prompts under the names clients use: on a clash the server's name in front, as for tools.
        prompts = {(name, server) for kind, name, server in shown if kind == "prompt"}
        assert prompts == {(f"{server}__{name}", server) for name in PROMPTS for server in ("conf-a", "conf-b")}
        # A URI two servers list is listed once, for the first of them; a template keeps its URI template.
        assert sorted((name, server) for kind, name, server in shown if kind == "resource") == sorted(
            (uri, "conf-a") for uri in RESOURCES
        )
        assert [(name, server) for kind, name, server in shown if kind == "template"] == [(TEMPLATE, "conf-a")]
        tools = sum(1 for kind, _, _ in shown if kind == "tool")
        assert shown[:tools] == [row for row in shown if row[0] == "tool"]  # the tools first, as before
        qtmodeltester.check(page.model)
        qtmodeltester.check(page.rows)

        # At a glance: how many of each kind, on the buttons that filter by it.
        texts = {kind: button.text().replace("&", "") for kind, button in page.kind_buttons.items()}
        assert texts == {
            None: f"All {tools + 14}",
            "tools": f"Tools {tools}",
            "prompts": "Prompts 10",
            "resources": "Resources 4",  # three resources and the template
        }
        assert page.count.text() == f"{tools + 14} items"

        # Filter by kind with the mouse, then by words within that kind.
        qtbot.mouseClick(page.kind_buttons["prompts"], Qt.MouseButton.LeftButton)
        assert {kind for kind, _, _ in rows_of(page)} == {"prompt"} and len(rows_of(page)) == 10
        assert page.count.text() == "10 prompts"
        page.set_filter("arg1 conf-b")  # argument names are searched too
        assert rows_of(page) == [("prompt", "conf-b__test_prompt_with_arguments", "conf-b")]
        assert page.count.text() == "1 of 10 prompts"
        page.set_filter("")
        page.set_kind("resources")  # templates are resources, as clients list them together
        assert sorted(kind for kind, _, _ in rows_of(page)) == ["resource"] * 3 + ["template"]
        page.set_filter("png")  # a MIME type is searched too
        assert rows_of(page) == [("resource", "test://static-binary", "conf-a")]
        page.set_filter("")
        page.set_kind("tools")
        assert {kind for kind, _, _ in rows_of(page)} == {"tool"} and page.count.text() == f"{tools} tools"
        page.set_kind(None)
        assert len(rows_of(page)) == tools + 14


async def test_a_prompt_and_a_resource_in_detail_are_what_a_client_gets(tmp_path: Path, qtbot: QtBot) -> None:
    async with (
        gui_context(tmp_path, SERVERS) as ctx,
        Client(ctx.engine.router.server, mode="legacy", cache=None) as client,
    ):
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.resize(1100, 700)
        page.show()
        await ready(ctx, page)

        key = key_of(page, "prompt", "conf-b__test_prompt_with_arguments")
        assert page.select_key(key)
        detail = page.offer_detail
        assert page.details.currentWidget() is detail
        assert detail.title.text() == "conf-b__test_prompt_with_arguments"
        assert detail.kind.text() == "Prompt of conf-b"
        assert detail.facts["Original name"].text() == "test_prompt_with_arguments"
        assert detail.facts["Arguments"].text().splitlines() == [
            "arg1 (required) — First test argument",
            "arg2 (required) — Second test argument",
        ]
        assert not detail.facts["URI"].isVisible()  # nothing to say: the row is hidden
        request = json.loads(detail.request.text())
        assert request == {
            "name": "conf-b__test_prompt_with_arguments",
            "arguments": {"arg1": "<arg1>", "arg2": "<arg2>"},
        }
        # The request as shown, filled in, is what a client sends: the server answers it.
        got = await client.get_prompt(request["name"], {"arg1": "paris", "arg2": "london"})
        assert any("paris" in str(message.content) for message in got.messages)
        # No tool settings for a prompt: no check boxes, nothing to toggle, no token size.
        for column in (ALWAYS_ON, ENABLED):
            index = cell(page, key, column)
            assert index.data(CHECK) is None and not page.model.flags(index) & Qt.ItemFlag.ItemIsUserCheckable
            assert not page.model.setData(index, Qt.CheckState.Checked, CHECK)
        assert cell(page, key, TOKENS).data() == ""
        page.table.customContextMenuRequested.emit(page.table.visualRect(page.table.currentIndex()).center())
        menu = page.context_menu
        assert menu is not None
        assert [a.text() for a in menu.actions()] == ["Copy “conf-b__test_prompt_with_arguments”"]
        menu.close()

        key = key_of(page, "resource", "test://static-text")
        assert page.select_key(key)
        assert detail.kind.text() == "Resource of conf-a"
        assert detail.facts["URI"].text() == "test://static-text" and detail.facts["MIME type"].text() == "text/plain"
        assert detail.facts["Also listed by"].text() == "conf-b"
        assert json.loads(detail.listed.text())["name"] == "static-text"  # as the server listed it
        read = await client.read_resource(json.loads(detail.request.text())["uri"])
        assert any(isinstance(c, types.TextResourceContents) and c.text for c in read.contents)

        assert page.select_key(key_of(page, "template", TEMPLATE))
        assert detail.kind.text() == "Resource template of conf-a"
        assert detail.facts["URI template"].text() == TEMPLATE

        # A tool again: its own detail, with its settings.
        assert page.select_key("plain:echo")
        assert page.details.currentWidget() is page.detail and page.detail.title.text() == "echo"
        assert cell(page, "plain:echo", ALWAYS_ON).data(CHECK) == Qt.CheckState.Unchecked


async def test_the_catalogue_follows_a_server_going(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.show()
        await ready(ctx, page)
        key = key_of(page, "prompt", "conf-a__test_simple_prompt")
        assert page.select_key(key)
        await ctx.control.set_enabled("conf-b", False)
        # No clash left: conf-a's prompts take their plain names; the same row stays selected.
        await until(lambda: cell(page, key, NAME).data() == "test_simple_prompt")
        assert not any(server == "conf-b" for _, _, server in rows_of(page))
        assert page.selected_key() == key and page.offer_detail.title.text() == "test_simple_prompt"
        resource = key_of(page, "resource", "test://static-text")
        assert page.select_key(resource)
        assert not page.offer_detail.facts["Also listed by"].isVisible()  # conf-b no longer lists it


async def test_the_server_detail_counts_and_lists_what_a_server_offers(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()))
        page.select("conf-b")
        detail = page.detail
        tools = len(ctx.engine.downstreams["conf-b"].tools or [])
        await until(lambda: tab_titles(page) == ["Stderr", f"Tools ({tools})", "Prompts (5)", "Resources (4)"])
        assert names_in(detail.prompts) == PROMPTS  # the server's own names, as it listed them
        arguments = detail.prompts.topLevelItem(1)
        assert arguments is not None and arguments.text(1) == "arg1 (required), arg2 (required)"
        assert names_in(detail.resources) == [*RESOURCES, TEMPLATE]
        template = detail.resources.topLevelItem(3)
        assert template is not None and template.text(1) == "template (template)"

        page.select("plain")  # tools only: nothing else to list
        plain = len(ctx.engine.downstreams["plain"].tools or [])
        await until(lambda: tab_titles(page) == ["Stderr", f"Tools ({plain})", "Prompts (0)", "Resources (0)"])
        assert names_in(detail.prompts) == [] and names_in(detail.resources) == []


async def test_the_engine_signals_tell_of_offers(tmp_path: Path) -> None:
    async with gui_context(tmp_path, SERVERS, started=False) as ctx:
        offers: list[bool] = []
        servers: set[str] = set()
        ctx.signals.offersChanged.connect(lambda: offers.append(True))
        ctx.signals.statusChanged.connect(servers.update)
        await ctx.engine.start()
        # Once the servers listed them: the merged offers changed, and each server's own lists did.
        await until(lambda: len(ctx.engine.offerings.prompts()) == 2 * len(PROMPTS))
        await until(lambda: offers and {"conf-a", "conf-b"} <= servers)
        offers.clear()
        # A server disabled: what clients see changes though no server listed anything anew.
        await ctx.control.set_enabled("conf-b", False)
        await until(lambda: offers)
        assert {p.exposed for p in ctx.engine.offerings.prompts()} == set(PROMPTS)


async def test_the_kind_buttons_answer_their_keys(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = CataloguePage(ctx)
        qtbot.addWidget(page)
        page.show()
        page.activateWindow()
        await ready(ctx, page)

        async def pressed(key: Qt.Key, kinds: set[str]) -> None:
            qtbot.keyClick(page.filter, key, Qt.KeyboardModifier.AltModifier)
            await until(lambda: {kind for kind, _, _ in rows_of(page)} == kinds)

        await pressed(Qt.Key.Key_P, {"prompt"})
        await pressed(Qt.Key.Key_R, {"resource", "template"})
        await pressed(Qt.Key.Key_T, {"tool"})
        await pressed(Qt.Key.Key_A, {"tool", "prompt", "resource", "template"})
