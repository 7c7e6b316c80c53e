"""The window's Sign in and Sign out, in front of a real engine and a real protected server (the
SDK's authorization server on loopback, as a subprocess): a server that needs a sign-in shows the
button; clicking it runs the sign-in with a scripted user agent in place of the system browser, and
the server turns ready; Sign out forgets the tokens and the server needs a sign-in again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from mcpmanager.core.auth.storage import read_tokens
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.vault.store import Vault
from mcpmanager.gui.servers_page import ServersPage
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until
from tests.helpers.oauth_server import follow, protected_server


async def test_sign_in_and_out_from_the_server_detail(tmp_path: Path, qtbot: QtBot) -> None:
    async with protected_server() as server, gui_context(tmp_path, {"notes": {"url": f"{server.base}/mcp"}}) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        page.detail.show_server("notes")
        bar = page.detail.sign_in
        opened: list[str] = []

        async def agent(url: str) -> None:  # the system browser, scripted
            opened.append(url)
            await follow(url)

        bar.open_url = agent
        notes = ctx.engine.downstreams["notes"]
        await until(lambda: notes.status.state is State.NEEDS_SIGN_IN and bar.sign_in_button.isVisible())
        assert not bar.sign_out_button.isVisible() and "wants you to sign in" in bar.note.text()
        assert "needs-sign-in" in page.detail.state.text()

        qtbot.mouseClick(bar.sign_in_button, Qt.MouseButton.LeftButton)
        await until(lambda: notes.status.state is State.READY, timeout=30)
        assert len(opened) == 1 and read_tokens(Vault(), "notes") is not None
        await until(lambda: bar.sign_out_button.isVisible() and not bar.sign_in_button.isVisible())
        assert bar.note.text() == "Signed in to notes."

        qtbot.mouseClick(bar.sign_out_button, Qt.MouseButton.LeftButton)
        await until(lambda: notes.status.state is State.NEEDS_SIGN_IN and bar.sign_in_button.isVisible(), timeout=30)
        assert read_tokens(Vault(), "notes") is None and "revoked" in bar.note.text()
        assert (await server.counters())["revocations"] == 2


async def test_a_local_server_shows_no_sign_in(tmp_path: Path, qtbot: QtBot) -> None:
    async with gui_context(tmp_path, {"local": fixture("--name", "local")}) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        page.detail.show_server("local")
        await until(lambda: ctx.engine.downstreams["local"].status.state is State.READY)
        assert not page.detail.sign_in.isVisible()


async def test_a_sign_in_left_unfinished_in_the_browser_can_be_cancelled(tmp_path: Path, qtbot: QtBot) -> None:
    async with protected_server() as server, gui_context(tmp_path, {"notes": {"url": f"{server.base}/mcp"}}) as ctx:
        page = ServersPage(ctx)
        qtbot.addWidget(page)
        page.show()
        page.detail.show_server("notes")
        bar = page.detail.sign_in
        shown = asyncio.Event()

        async def closed_browser(url: str) -> None:  # the page opened, and the user walked away
            shown.set()

        bar.open_url = closed_browser
        await until(lambda: ctx.engine.downstreams["notes"].status.state is State.NEEDS_SIGN_IN)
        await until(bar.sign_in_button.isVisible)
        qtbot.mouseClick(bar.sign_in_button, Qt.MouseButton.LeftButton)
        await shown.wait()
        assert bar.sign_in_button.text() == "Cancel" and "Waiting" in bar.note.text()
        qtbot.mouseClick(bar.sign_in_button, Qt.MouseButton.LeftButton)
        await until(lambda: bar.sign_in_button.text() == "Sign in")
        assert bar.note.text() == "Sign-in cancelled." and read_tokens(Vault(), "notes") is None
        assert ctx.engine.downstreams["notes"].status.state is State.NEEDS_SIGN_IN
