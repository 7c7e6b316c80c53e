"""The Servers page in front of real servers: lights follow crashes and restarts, reasons are shown,
stderr reaches the pane, and every action goes through to the engine and the config file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import Client
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QIcon, QImage
from PySide6.QtWidgets import QMessageBox, QToolBar, QToolButton
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.gui import style
from mcpmanager.gui.main_window import MainWindow
from mcpmanager.gui.servers_model import NAME, STATE, TOOLS
from mcpmanager.gui.servers_page import ServersPage
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

SERVERS = {
    "steady": fixture("--name", "steady"),
    "crashy": fixture("--name", "crashy", "--crash-after", "1"),
    "broken": fixture("--name", "broken", "--exit-at-start", "3"),
    "missing": {"command": "/nonexistent/mcp-server-nothing"},
    "off": {**fixture("--name", "off"), "disabled": True},
}


def light_of(page: ServersPage, name: str) -> State | None:
    """The state whose light the table shows for `name` (the icons are cached per state)."""
    icon = page.model.data(page.model.index(page.model.row_of(name), NAME), Qt.ItemDataRole.DecorationRole)
    return next((s for s in State if style.light(s).cacheKey() == icon.cacheKey()), None)


def text_of(page: ServersPage, name: str, column: int) -> str:
    return str(page.model.data(page.model.index(page.model.row_of(name), column)))


async def test_lights_and_reasons_follow_the_servers(tmp_path: Path, qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        seen: list[State | None] = []

        def sample(servers: set[str]) -> None:
            if "crashy" in servers:
                seen.append(light_of(page, "crashy"))

        ctx.signals.statusChanged.connect(sample)
        await until(lambda: light_of(page, "steady") is State.READY and light_of(page, "crashy") is State.READY)
        assert text_of(page, "steady", TOOLS) == str(len(ctx.engine.downstreams["steady"].tools or []))
        assert light_of(page, "off") is State.DISABLED and text_of(page, "off", STATE) == "disabled"
        await until(lambda: light_of(page, "missing") is State.FAILED)
        assert "command not found: /nonexistent/mcp-server-nothing" in text_of(page, "missing", STATE)
        # A server that dies at start: red with its exit and last stderr line, then a crash loop.
        reason = "exited 3 before the handshake finished — fatal: cannot start (config missing)"
        await until(lambda: reason in text_of(page, "broken", STATE), timeout=30)
        assert light_of(page, "broken") in (State.BACKOFF, State.STARTING)
        # While it retries, the row still says why it crashed.
        await until(lambda: text_of(page, "broken", STATE).startswith("starting: restarting; last exit: exited 3"))
        await until(lambda: light_of(page, "broken") is State.FAILED, timeout=40)
        assert "crash loop" in text_of(page, "broken", STATE)
        qtmodeltester.check(page.model)
        qtmodeltester.check(page.sorted)

        # A crash while serving: red, then amber as it restarts, then green again.
        seen.clear()
        async with Client(ctx.engine.router.server, mode="legacy", cache=None) as client:
            await client.call_tool("crashy__echo", {"text": "bye"})
        await until(lambda: State.BACKOFF in seen and seen[-1] is State.READY, timeout=30)
        after = seen[seen.index(State.BACKOFF) :]
        assert after.index(State.STARTING) < len(after) - 1, seen  # red, amber, then green
        assert ctx.engine.downstreams["crashy"].status.restarts >= 1


async def test_the_detail_shows_stderr_facts_and_tools(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        await until(lambda: ctx.engine.downstreams["steady"].status.state is State.READY)
        page.select("steady")
        detail = page.detail
        process = ctx.engine.downstreams["steady"].process
        assert process is not None
        await until(lambda: detail.facts["PID"].text() == str(process.pid))
        assert detail.facts["Command"].text().startswith(sys.executable)
        assert "--name steady" in detail.facts["Command"].text()
        assert detail.facts["Log file"].text().endswith("steady.log")

        def names() -> set[str]:
            return {detail.tools.topLevelItem(i).text(0) for i in range(detail.tools.topLevelItemCount())}  # type: ignore[union-attr]

        # The window hears of the engine through a coalescing timer: the PID may be on screen from a
        # refresh while the server was starting, its tools from the next one.
        await until(lambda: {"echo", "add", "whoami"} <= names())
        await until(lambda: "ready" in detail.log_view.text())  # the fixture's own stderr line
        # A crashed server's stderr is in the pane: why it died, in its own words.
        await until(lambda: ctx.engine.downstreams["broken"].status.restarts >= 1, timeout=30)
        page.select("broken")
        await until(lambda: "fatal: cannot start (config missing)" in detail.log_view.text())
        assert "exited 3" in detail.state.text()
        await until(lambda: detail.facts["Last exit"].text().startswith("exited 3"))


async def test_the_first_server_is_shown_once_the_engine_starts(tmp_path: Path, qtbot: QtBot) -> None:
    # The app builds the window first and starts the engine after: the first server is selected
    # before it has a process, and its detail must come alive when it does, not stay greyed out.
    async with gui_context(tmp_path, {"first": fixture("--name", "first")}, started=False) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        assert page.selected() == "first"
        await ctx.engine.start()
        await until(lambda: ctx.engine.downstreams["first"].status.state is State.READY)
        detail = page.detail
        await until(detail.isEnabled)
        await until(lambda: "ready" in detail.state.text())
        assert detail.facts["Command"].text().startswith(sys.executable)


async def test_actions_reach_the_engine_and_the_file(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, SERVERS) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        config = ctx.control.path
        await until(lambda: light_of(page, "steady") is State.READY)
        page.select("steady")
        first = ctx.engine.downstreams["steady"].process
        assert first is not None and page.commands["restart"].isEnabled()
        assert not page.commands["start"].isEnabled()
        page.commands["restart"].trigger()
        await until(lambda: (p := ctx.engine.downstreams["steady"].process) is not None and p.pid != first.pid)
        await until(lambda: light_of(page, "steady") is State.READY)
        page.commands["stop"].trigger()
        await until(lambda: light_of(page, "steady") is State.STOPPED and page.commands["start"].isEnabled())
        assert text_of(page, "steady", STATE) == "stopped"
        page.commands["start"].trigger()
        await until(lambda: light_of(page, "steady") is State.READY)
        # Disable / enable: saved in the file, applied at once.
        page.commands["enable"].trigger()
        await until(lambda: light_of(page, "steady") is State.DISABLED)
        assert json.loads(config.read_text())["mcpServers"]["steady"]["disabled"] is True
        assert page.commands["enable"].text() == "Enable"
        page.commands["enable"].trigger()
        await until(lambda: light_of(page, "steady") is State.READY)
        assert json.loads(config.read_text())["mcpServers"]["steady"].get("disabled", False) is False
        # Remove asks first (non-modal); Cancel keeps it, Yes removes it from the file and the table.
        page.select("off")
        page.commands["remove"].trigger()
        page.confirm.button(QMessageBox.StandardButton.Cancel).click()
        await until(lambda: not page.confirm.isVisible())
        assert "off" in json.loads(config.read_text())["mcpServers"]
        page.commands["remove"].trigger()
        page.confirm.button(QMessageBox.StandardButton.Yes).click()
        await until(lambda: "off" not in page.model.names)
        assert "off" not in json.loads(config.read_text())["mcpServers"]
        assert page.model.rowCount(QModelIndex()) == len(SERVERS) - 1
        assert not ctx.errors.problems


async def test_a_refused_action_is_shown_not_lost(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        await until(lambda: light_of(page, "alpha") is State.READY)
        ctx.control.path.write_text('{"mcpServers": {"alpha": {"command": 3}}}')  # broken meanwhile
        page.select("alpha")
        page.commands["enable"].trigger()
        await until(lambda: bool(ctx.errors.problems))
        title = ctx.errors.problems[-1].title
        assert title.startswith("Could not disable alpha: ") and "mcpServers.alpha.command" in title, title
        assert title.endswith("(fix the file first; it was left as it is)"), title
        assert light_of(page, "alpha") is State.READY  # nothing changed


def in_view(page: ServersPage, name: str) -> bool:
    """Whether `name`'s row is wholly on screen in the table."""
    index = page.sorted.mapFromSource(page.model.index(page.model.row_of(name), NAME))
    return page.table.viewport().rect().contains(page.table.visualRect(index))


async def test_a_failing_server_below_the_fold_is_shown_at_start_until_the_user_picks_a_row(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """Docs (desktop-manager.md, Servers): the page selects the first server in trouble and scrolls to
    it until the user picks a row; the rows keep the config's order."""
    servers = {"working": fixture("--name", "working")}
    servers |= {f"spare-{n:02d}": {**fixture(), "disabled": True} for n in range(24)}  # rows, no processes
    servers["gone"] = {"command": "/nonexistent/mcp-server-gone"}
    async with gui_context(tmp_path, servers, started=False) as ctx:
        window = MainWindow(ctx)  # the app's order: the window first, at its default size, then the engine
        qtbot.addWidget(window)
        window.show()
        page = window.servers
        assert page.selected() == "working" and not in_view(page, "gone")  # below the fold
        await ctx.engine.start()
        await until(lambda: page.selected() == "gone")
        assert in_view(page, "gone") and page.detail.name == "gone"
        await until(lambda: "command not found: /nonexistent/mcp-server-gone" in page.detail.state.text())
        assert page.model.names == list(servers)  # nothing moved
        # Once the user has picked a row, the page never moves the selection: a new failure is only red.
        index = page.sorted.mapFromSource(page.model.index(page.model.row_of("spare-23"), NAME))
        qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=page.table.visualRect(index).center())
        assert page.selected() == "spare-23"
        heard: list[set[str]] = []
        ctx.signals.statusChanged.connect(heard.append)  # after the page's own slot: it has seen the news
        await ctx.control.restart("gone")
        await until(lambda: any("gone" in servers for servers in heard) and light_of(page, "gone") is State.FAILED)
        assert page.selected() == "spare-23"


async def test_the_toolbar_buttons_have_icons(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        toolbar = page.findChild(QToolBar)
        assert isinstance(toolbar, QToolBar)
        buttons = [b for b in toolbar.findChildren(QToolButton) if b.defaultAction() in page.commands.values()]
        assert len(buttons) == len(page.commands)
        for button in buttons:
            assert not button.icon().isNull(), f"{button.text()} has no icon"
            assert button.toolButtonStyle() is Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        drawn = [image_of(page.commands[key].icon()) for key in page.commands]
        assert all(a != b for i, a in enumerate(drawn) for b in drawn[i + 1 :])  # one icon per action
        # Enable and Disable are one button: its icon says which, like its text.
        await until(lambda: light_of(page, "alpha") is State.READY)
        page.select("alpha")
        disable = image_of(page.commands["enable"].icon())
        page.commands["enable"].trigger()
        await until(lambda: page.commands["enable"].text() == "Enable")
        assert image_of(page.commands["enable"].icon()) not in (disable, *drawn)


def image_of(icon: QIcon) -> QImage:
    """What an icon draws (a style's icons are new objects, with new cache keys, each time asked)."""
    return icon.pixmap(16, 16).toImage()
