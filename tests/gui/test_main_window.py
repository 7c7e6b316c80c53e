"""The window as a whole: what the status bar says (endpoint, connected clients, context, servers),
errors from anywhere reach the error bar, a config that stops loading is shown, and closing the
window either hides it to the tray or quits."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from mcpmanager import __version__
from mcpmanager.core.serve.http import serve_http
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from mcpmanager.gui.app import load_or_demo
from mcpmanager.gui.errors import ErrorFunnel
from mcpmanager.gui.main_window import MainWindow
from tests.helpers.clients import http_client
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until


async def test_the_status_bar_tells_endpoint_clients_context_and_servers(tmp_path: Path, qtbot: QtBot) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "off": {**fixture(), "disabled": True}}
    async with gui_context(tmp_path, servers) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        await until(lambda: window.status.servers.text() == "Servers ready 1/1")  # disabled ones do not count
        resting, direct = ctx.engine.router.context_tokens()
        assert 0 < resting < direct
        expected = f"Resting context {resting:,} tokens (direct exposure would be {direct:,})"
        await until(lambda: window.status.context.text() == expected)  # refreshed once the catalogue settles
        urls: list[str] = []

        def listening(url: str) -> None:
            ctx.engine.endpoint = url
            urls.append(url)
            ctx.signals.serversChanged.emit()

        serving = spawn(serve_http(ctx.engine.router, 0, listening, token="t0ken"), name="test http")
        try:
            await until(lambda: bool(urls))
            await until(lambda: window.status.endpoint.text() == f"Endpoint: {urls[0]}")
            assert window.status.clients.text() == "0 clients connected"
            async with http_client(urls[0], "t0ken") as client:
                await client.list_tools()
                await until(lambda: window.status.clients.text() == "1 client connected", timeout=5)
            await until(lambda: window.status.clients.text() == "0 clients connected", timeout=5)
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)


async def test_errors_from_anywhere_reach_the_error_bar(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        ctx.errors.install(loop)
        try:

            async def broken() -> None:
                raise RuntimeError("a bug in a background task")

            loop.call_soon(
                lambda: loop.call_exception_handler({"message": "task failed", "exception": RuntimeError("boom")})
            )
            await until(lambda: window.error_bar.isVisible())
            assert window.error_bar.message.text() == "task failed: RuntimeError: boom"
            assert window.error_bar.details.isVisible()  # the traceback is one click away
            window.error_bar.dismiss.click()
            assert not window.error_bar.isVisible()
            # A change the user asked for that is refused: said in words, not a traceback.
            ctx.run(ctx.control.start("nowhere"), "start nowhere")
            await until(lambda: window.error_bar.isVisible())
            assert window.error_bar.message.text() == "Could not start nowhere: no server named 'nowhere' is running"
            assert window.error_bar.count.text() == "(2 so far)"
            del broken
        finally:
            ctx.errors.uninstall()
            loop.set_exception_handler(previous)


async def test_a_config_that_stops_loading_is_shown_and_the_setup_stays(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        watching = spawn(ctx.engine.watch_config(interval=0.05), name="test watch")
        try:
            await until(lambda: ctx.engine.downstreams["alpha"].status.state is State.READY)
            ctx.control.path.write_text('{"mcpServers": {"alpha": {"args": []}}}')
            await until(lambda: bool(ctx.errors.problems))
            title = ctx.errors.problems[-1].title
            assert title.startswith("Config change not applied (the running setup stays): ")
            assert "mcpServers.alpha" in title
            assert ctx.engine.downstreams["alpha"].status.state is State.READY
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)


async def test_closing_hides_to_the_tray_or_quits_without_one(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        tray = [True]
        window = MainWindow(ctx, has_tray=lambda: tray[0])
        qtbot.addWidget(window)
        quits: list[bool] = []
        window.quitRequested.connect(lambda: quits.append(True))
        window.show()
        window.close()
        assert window.isHidden() and quits == []  # the engine goes on behind the tray icon
        tray[0] = False
        window.show()
        window.close()
        assert quits == [True]  # no tray: closing is quitting (there would be no way back)
        assert ctx.engine.downstreams["alpha"].status.state is not State.STOPPED  # stopping is the app's job


async def test_help_about_tells_version_places_and_licence(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        help_menu = next(a for a in window.menuBar().actions() if a.text() == "&Help").menu()
        assert isinstance(help_menu, QMenu)  # PySide6 types QAction.menu() as a QObject
        [about_action] = help_menu.actions()
        assert about_action.text() == f"&About mcpmanager {__version__}…"
        about_action.trigger()
        dialog = window.about
        assert dialog is not None
        await until(dialog.isVisible)
        assert dialog.title.text() == f"<h2>mcpmanager {__version__}</h2>"
        paths = ctx.engine.paths
        for place in (paths.config_file, paths.log_dir, paths.cache_dir, paths.runtime_dir):
            assert str(place) in dialog.places.text()
        assert dialog.licence.toPlainText().startswith("MIT License\n")
        assert "from source" in dialog.facts.text() and "Qt 6." in dialog.facts.text()
        dialog.close()
        window.show_about()  # asked again: the same dialog comes back
        assert window.about is dialog and dialog.isVisible()


async def test_a_config_broken_at_start_is_shown_in_the_window_and_logged(
    tmp_path: Path, qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    """The report came before the error bar existed: the window showed nothing, and nothing was logged."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    paths.ensure()
    paths.config_file.write_text('{"mcpServers": {"alpha": {"args": []}}}', encoding="utf-8")
    funnel = ErrorFunnel()
    with caplog.at_level(logging.ERROR):
        config, demo = load_or_demo(paths, funnel)
    assert config.servers == {} and not demo
    assert any("mcpServers.alpha" in record.getMessage() for record in caplog.records)
    async with gui_context(tmp_path / "ctx", {}) as ctx:
        ctx.errors = funnel
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        await until(lambda: window.error_bar.isVisible())
        assert "mcpServers.alpha" in window.error_bar.message.text()
        assert "running with no servers until the file loads" in window.error_bar.message.text()


async def test_ctrl_f_after_choosing_a_page_in_the_sidebar_reaches_its_search_field(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """Clicking the sidebar leaves the focus there, outside every page: Ctrl+F went nowhere."""
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        await until(window.isActiveWindow)
        await until(lambda: ctx.engine.downstreams["alpha"].status.state is State.READY)
        fields = {
            window.servers: window.servers.detail.log_view.find_field,  # the selected server's stderr
            window.catalogue: window.catalogue.filter,
            window.try_it: window.try_it.query,
            window.activity: window.activity.filter,
        }
        for page, field in fields.items():
            item = window.nav.item(window.pages.indexOf(page))
            assert item is not None
            qtbot.mouseClick(
                window.nav.viewport(), Qt.MouseButton.LeftButton, pos=window.nav.visualItemRect(item).center()
            )
            assert window.pages.currentWidget() is page and window.nav.hasFocus()
            qtbot.keyClick(window.nav, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
            assert field.hasFocus(), f"Ctrl+F on {item.text()} left the focus on {QApplication.focusWidget()!r}"
        # From inside a page too: the stderr text, the catalogue's table.
        window.show_page(window.servers)
        window.servers.detail.log_view.text_edit.setFocus()
        qtbot.keyClick(window.servers.detail.log_view.text_edit, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert window.servers.detail.log_view.find_field.hasFocus()
        window.show_page(window.catalogue)
        window.catalogue.table.setFocus()
        window.catalogue.filter.setText("echo")
        qtbot.keyClick(window.catalogue.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert window.catalogue.filter.hasFocus() and window.catalogue.filter.selectedText() == "echo"
        # The Clients page has nothing to search: Ctrl+F is off there, not sent somewhere else.
        window.show_page(window.clients)
        window.nav.setFocus()
        qtbot.keyClick(window.nav, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert window.nav.hasFocus()
