"""The Try it page against a real engine with real fixture servers: its search is what discover_tools
returns to a real client, its resolution is what serving would do, and it never calls a server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PySide6.QtGui import QGuiApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.try_it_page import NAME, SCORE, TryItPage
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until
from tests.helpers.sample_tools import TOOLS


@pytest.fixture
def servers(tmp_path: Path) -> dict[str, Any]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    return {
        "gh": fixture("--name", "gh", "--tools-file", str(tools), "--log-calls"),
        "other": fixture("--name", "other", "--log-calls"),  # its echo makes `echo` ambiguous
    }


async def ready(ctx: GuiContext) -> None:
    await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def calls_received(ctx: GuiContext, server: str) -> list[str]:
    """The `call NAME ARGS` lines the fixture server logged (`--log-calls`) to its stderr log."""
    log = ctx.engine.paths.log_dir / f"{server}.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [line.partition(" ")[2] for line in lines if line.partition(" ")[2].startswith("call ")]


async def test_search_shows_what_discover_tools_returns(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = TryItPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)
        qtbot.keyClicks(page.query, "issue")
        assert page.hits.rowCount() == 0  # typed, not searched yet: it waits for a pause
        await until(lambda: page.hits.rowCount() > 0)
        async with Client(ctx.engine.router.server) as client:
            result = await client.call_tool("discover_tools", {"query": "issue", "limit": 5})
            hits = (result.structured_content or {})["tools"]
            assert page.hits.names() == [hit["name"] for hit in hits]
            # The three issue tools by their words, then the two that fail with an error ("issue" as a
            # problem) by the semantic half of the search, below them.
            assert page.hits.names() == ["get_issue", "delete_issue", "create_issue", "gh__fail", "other__fail"]
            assert [page.hits.index(r, SCORE).data() for r in range(len(hits))] == [f"{h['score']:.3f}" for h in hits]
            assert page.model_text.toPlainText() == text_of(result)
            # The best hit is selected, its template shown ready to copy.
            assert page.template.toPlainText() == json.dumps(hits[0]["call"], indent=2)
            page.results.selectRow(2)
            assert page.hits.index(2, NAME).data() == "create_issue"
            qtmodeltester.check(page.hits)
            assert json.loads(page.template.toPlainText()) == {
                "tool_name": "create_issue",
                "arguments": {"owner": "<owner>", "repo": "<repo>", "title": "<title>"},
            }
            assert page.optional.text() == "optional: body"
            page.copy_button.click()
            assert QGuiApplication.clipboard().text() == page.template.toPlainText()

            page.limit.setValue(2)
            await until(lambda: page.hits.rowCount() == 2)
            assert page.hits.names() == [hit["name"] for hit in hits[:2]]
            assert not page.empty.isVisibleTo(page)

            page.query.setText("zebra crossing")
            await until(lambda: page.empty.isVisibleTo(page))
            assert page.empty.text().startswith("No tool matches 'zebra crossing'.")
            assert page.hits.rowCount() == 0 and page.template.toPlainText() == ""
            nothing = await client.call_tool("discover_tools", {"query": "zebra crossing", "limit": 2})
            assert page.model_text.toPlainText() == text_of(nothing)


async def test_resolution_shows_what_serving_would_do_and_sends_nothing(
    tmp_path: Path, servers: dict[str, Any], qtbot: QtBot
) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = TryItPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)

        async def shows(name: str, arguments: str = "") -> None:
            page.name.setText(name)
            page.arguments.setPlainText(arguments)
            assert page.shown_for != (name, arguments)  # typed, not resolved yet: it waits for a pause
            await until(lambda: page.shown_for == (name, arguments))

        # A wrong name and wrong argument names: the tool, how, the renames and what is forwarded.
        await shows("createIssue", '{"owner": "o", "repository": "r", "issue_title": "t"}')
        assert page.resolved.text() == "create_issue [gh]" and page.how.text() == "normalized"
        assert page.renamed.text() == "repository→repo, issue_title→title"
        assert json.loads(page.outcome.toPlainText()) == {"owner": "o", "repo": "r", "title": "t"}
        assert page.headline.text() == "Would call create_issue on gh (normalized)"

        # An ambiguous name: its candidates and the error a model reads.
        await shows("get_current_weather", '{"town": "Oslo"}')
        assert page.resolved.text() == "—"
        assert page.candidates.text() == "get_weather [gh], get_weather_by_city [gh]"
        assert page.outcome.toPlainText().startswith(
            "Ambiguous tool name 'get_current_weather': it may be get_weather [gh] or get_weather_by_city [gh]."
        )
        # ... settled by arguments only one candidate takes.
        await shows("get_current_weather", '{"city": "Oslo"}')
        assert page.resolved.text() == "get_weather_by_city [gh]" and page.how.text() == "arguments"

        # The closest tool destroys: withheld, with the other suggestions.
        await shows("remove_issue")
        assert page.candidates.text() == "delete_issue [gh] (withheld: destructive)"
        suggested = ctx.engine.router.resolver.resolve("remove_issue").suggestions
        assert suggested[0] == "delete_issue" and page.suggestions.text() == ", ".join(suggested)
        assert "The closest is delete_issue, but it can destroy data" in page.outcome.toPlainText()

        # Refused arguments, and a name on two servers.
        await shows("edit_file", '{"path": "/a", "content": "x", "append": true}')
        assert page.headline.text().startswith("Refused:")
        assert page.outcome.toPlainText().startswith("Not called: the arguments for 'edit_file' need fixing")
        assert "- 'append' is not a parameter of edit_file" in page.outcome.toPlainText()
        await shows("echo", '{"text": "x"}')
        assert page.candidates.text() == "gh__echo [gh], other__echo [other]"

        # Invalid JSON says where; nothing is resolved meanwhile.
        page.arguments.setPlainText('{"a": 1 "b": 2}')
        await until(lambda: page.arguments_problem.text() != "")
        assert page.arguments_problem.text() == "Invalid arguments: line 1, column 9: Expecting ',' delimiter"
        assert page.resolved.text() == "—" and page.outcome.toPlainText() == ""

        # Nothing reached a server. One real call proves the servers' call logs are being written.
        assert calls_received(ctx, "gh") == [] and calls_received(ctx, "other") == []
        async with Client(ctx.engine.router.server) as client:
            marker = await client.call_tool("call_tool", {"tool_name": "gh__echo", "arguments": {"text": "marker"}})
            assert not marker.is_error
        await until(lambda: calls_received(ctx, "gh") == ['call echo {"text": "marker"}'])
        assert calls_received(ctx, "other") == []


async def test_resolution_follows_the_catalogue(tmp_path: Path, servers: dict[str, Any], qtbot: QtBot) -> None:
    async with gui_context(tmp_path, servers) as ctx:
        page = TryItPage(ctx)
        qtbot.addWidget(page)
        await ready(ctx)
        page.name.setText("open_ticket")
        await until(lambda: page.headline.text() == "Unknown tool")
        await ctx.control.set_tool("gh:create_issue", aliases=["open_ticket"])
        await until(lambda: page.how.text() == "alias")  # no typing: the catalogue changed
        assert page.resolved.text() == "create_issue [gh]"
