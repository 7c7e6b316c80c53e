"""What was learned from use, in the real window: a client's discover-then-call appears on the
Catalogue page (query → tool, uses, last used); Forget and Forget all remove pairs from the engine
and its file; a tool called often through discovery is suggested always-on with its token price,
and one click makes it so."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from mcpmanager.core.proxy.token_count import tool_tokens
from mcpmanager.gui.learned_view import FORGET, QUERY, TOOL, USES, LearnedPanel
from mcpmanager.gui.main_window import MainWindow
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until


def cell(panel: LearnedPanel, row: int, column: int) -> str:
    item = panel.table.item(row, column)
    assert item is not None
    return item.text()


async def _discover_then_call(client: Client, query: str, tool: str, arguments: dict[str, object]) -> None:
    found = await client.call_tool("discover_tools", {"query": query})
    assert tool in [t["name"] for t in (found.structured_content or {})["tools"]]
    called = await client.call_tool("call_tool", {"tool_name": tool, "arguments": arguments})
    assert not called.is_error


async def test_the_learned_pairs_are_shown_and_forgotten(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.resize(1100, 760)
        window.show()
        window.show_page(window.catalogue)
        page = window.catalogue
        panel, bar = page.learned, page.suggestions
        await until(lambda: ctx.engine.catalogue.get("echo") is not None)
        assert not panel.isVisible() and not bar.isVisible()
        qtbot.mouseClick(page.learned_button, Qt.MouseButton.LeftButton)
        assert panel.isVisible() and panel.table.rowCount() == 0
        await until(lambda: panel.height() > 150)  # room of its own under the detail, not squeezed to nothing
        assert not panel.forget_all_button.isEnabled()

        async with Client(ctx.engine.router.server, mode="legacy", cache=None) as client:
            await _discover_then_call(client, "return the text unchanged", "echo", {"text": "hi"})
            await _discover_then_call(client, "add two numbers", "add", {"a": 1, "b": 2})
            await _discover_then_call(client, "sum of two numbers", "add", {"a": 3, "b": 4})
            await until(lambda: panel.table.rowCount() == 3)
            assert not bar.isVisible()  # twice is not often yet
            await _discover_then_call(client, "add these numbers", "add", {"a": 5, "b": 6})

        await until(lambda: panel.table.rowCount() == 4)
        rows = {cell(panel, r, QUERY): cell(panel, r, TOOL) for r in range(4)}
        assert rows["return the text unchanged"] == "echo  [alpha]"
        assert cell(panel, 0, QUERY) == "add these numbers"  # the most recent first
        assert cell(panel, 0, USES) == "1"
        assert "hi" not in json.dumps(ctx.engine.router.learning.store.document())  # no arguments kept

        # The tool's detail says what was learned about it.
        assert page.select_key("alpha:add")
        await until(lambda: "“add these numbers”" in page.detail.learned.text())
        assert "“sum of two numbers”" in page.detail.learned.text()

        # The suggestion: add was called three times through discovery; its price is its definition.
        await until(lambda: bar.isVisible())
        (suggestion,) = bar.suggestions
        add = ctx.engine.catalogue.get("add")
        assert add is not None and suggestion.tokens == tool_tokens(add.exposed_spec())
        assert bar.buttons[0].text() == f"Make always on (+{suggestion.tokens:,} tokens)"

        # Forget one pair with its own button: gone from the window, the engine and the file.
        row = next(r for r in range(4) if cell(panel, r, QUERY) == "return the text unchanged")
        button = panel.table.cellWidget(row, FORGET)
        assert isinstance(button, QPushButton)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert panel.table.rowCount() == 3
        store = ctx.engine.router.learning.store
        assert all(e.tool != "alpha:echo" for e in store.entries())
        learned_file = ctx.engine.paths.cache_dir / "learned.json"
        await until(lambda: learned_file.exists() and "echo" not in learned_file.read_text(encoding="utf-8"))

        # Make always on: the config has it, and the suggestion goes.
        qtbot.mouseClick(bar.buttons[0], Qt.MouseButton.LeftButton)
        await until(lambda: (tool := ctx.engine.catalogue.get("add")) is not None and tool.always_on)
        on_disk = json.loads(ctx.control.path.read_text(encoding="utf-8"))
        assert on_disk["tools"]["alpha:add"]["alwaysOn"] is True
        await until(lambda: not bar.isVisible())

        qtbot.mouseClick(panel.forget_all_button, Qt.MouseButton.LeftButton)
        assert panel.table.rowCount() == 0 and len(store) == 0
        assert page.detail.learned.text() == "nothing yet"
        await until(lambda: json.loads(learned_file.read_text(encoding="utf-8"))["learned"] == [])
