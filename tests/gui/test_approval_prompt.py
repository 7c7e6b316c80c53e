"""Asking in the window: the real main window offscreen in front of a real engine and a real
subprocess server, a real SDK client calling a destructive tool. The call waits in a card that shows
the tool, its server, the client and the arguments (secrets masked); Allow once forwards it, Deny
refuses it, Always allow forwards it and writes `approval: "allow"` to the config so the next call is
not asked; the catalogue's Approval choice changes the policy (Deny refuses at once); every decision
is in the activity table. Without the window, clients are asked instead."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.activity_model import APPROVAL
from mcpmanager.gui.approval_prompt import AskCard
from mcpmanager.gui.main_window import MainWindow
from tests.helpers.clients import text_of
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

OBJECT = {"type": "object", "properties": {"id": {"type": "integer"}, "token": {"type": "string"}}}
TOOLS = [
    {"name": "delete_item", "description": "Delete an item.", "inputSchema": OBJECT,
     "annotations": {"destructiveHint": True}},
    {"name": "get_item", "description": "Read an item.", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
]  # fmt: skip
SECRET = "s3cret-value-42"


def servers(folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    tools = folder / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    return {"store": fixture("--name", "store", "--tools-file", str(tools))}


async def card_for(window: MainWindow, calling: asyncio.Task[Any]) -> AskCard:
    panel = window.approvals
    await until(lambda: panel.cards or calling.done())
    assert not calling.done(), calling.result()
    [card] = panel.cards
    assert panel.isVisible()
    return card


def saved_approval(config: Path) -> Any:
    return json.loads(config.read_text(encoding="utf-8")).get("tools", {}).get("store:delete_item", {}).get("approval")


async def test_a_destructive_call_is_asked_in_the_window(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, servers(tmp_path / "tools"), mode="direct") as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        assert ctx.engine.router.approvals.window and not window.approvals.isVisible()
        await until(lambda: ctx.engine.downstreams["store"].status.state is State.READY)
        async with Client(ctx.engine.router.server) as client:

            def call(name: str = "delete_item", **arguments: Any) -> asyncio.Task[types.CallToolResult]:
                return asyncio.ensure_future(client.call_tool(name, {"id": 1, **arguments}))

            assert not (await client.call_tool("get_item", {"id": 1})).is_error  # read-only: not asked

            calling = call(token=SECRET)
            card = await card_for(window, calling)
            assert card.title.text() == "Allow mcp to call delete_item on store?"
            assert card.about.text().startswith(
                "Asked because its annotations say it can destroy data. Refused in 2:00"
            )
            assert json.loads(card.arguments.toPlainText()) == {"id": 1, "token": "***"}
            assert not calling.done()
            card.allow_once.click()
            allowed = await calling
            assert not allowed.is_error and json.loads(text_of(allowed)) == {"id": 1, "token": SECRET}
            await until(lambda: not window.approvals.isVisible())

            calling = call()
            (await card_for(window, calling)).deny.click()
            denied = await calling
            assert denied.is_error and text_of(denied).startswith("The user refused the call to 'delete_item'")

            calling = call()
            (await card_for(window, calling)).always.click()
            assert not (await calling).is_error
            await until(lambda: saved_approval(ctx.engine.paths.config_file) == "allow")
            await until(lambda: ctx.engine.config.tools["store:delete_item"].approval == "allow")
            assert not (await call()).is_error and window.approvals.cards == []  # not asked any more

            # The catalogue shows the tool's approval, and changes it.
            window.show_page(window.catalogue)
            choice = window.catalogue.detail.approval
            await until(lambda: window.catalogue.select_key("store:delete_item") and choice.value() == "allow")
            assert choice.itemText(0) == "By default: ask first (its annotations say it can destroy data)"
            choice.setCurrentIndex(3)
            choice.activated.emit(3)  # as a user's pick
            await until(lambda: saved_approval(ctx.engine.paths.config_file) == "deny")
            await until(lambda: ctx.engine.config.tools["store:delete_item"].approval == "deny")
            refused = await call()
            assert refused.is_error and "its approval is set to 'deny'" in text_of(refused)

        window.show_page(window.activity)
        model = window.activity.model
        await until(lambda: model.rowCount() == 6 and model.index(5, APPROVAL).data() == "denied by policy")
        assert [model.index(r, APPROVAL).data() for r in range(model.rowCount())] == [
            "",
            "allowed once in the window",
            "denied in the window",
            "allowed always in the window",
            "allowed by its setting",
            "denied by policy",
        ]
        assert SECRET not in ctx.engine.paths.config_file.read_text(encoding="utf-8")

        window.approvals.close_panel()  # the window goes: clients are asked from now on
        assert not ctx.engine.router.approvals.window
