"""The window and the keyring, in front of a real engine and the test's real keyring: the editor's
"Store in keyring" (a secret env row goes to the keyring as `SERVER/KEY`, the row shows the
reference, not masked, not editable, Save writes it and scrubs the backup, and the restarted server
still gets the secret), and the import preview's checkbox moving a client's secrets there."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import mcp_types as types
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot
from shiboken6 import isValid

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.vault.store import Vault
from mcpmanager.gui.clients_page import ClientsPage
from mcpmanager.gui.secret_table import MASK
from mcpmanager.gui.server_editor import ServerEditor
from tests.helpers.clients import text_of
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

TOKEN = "gh-token-in-the-editor-5c1d"


async def test_store_in_keyring_replaces_the_secret_with_a_reference(tmp_path: Path, qtbot: QtBot) -> None:
    owner = QWidget()
    qtbot.addWidget(owner)
    servers = {"gh": fixture("--env-tool", env={"GITHUB_TOKEN": TOKEN, "LANG": "C.UTF-8"})}
    async with gui_context(tmp_path, servers) as ctx:
        await until(lambda: ctx.engine.downstreams["gh"].status.state is State.READY)
        first_pid = ctx.engine.downstreams["gh"].process
        editor = ServerEditor(ctx, ctx.engine.config.servers["gh"], owner)
        editor.show()
        table = editor.env
        assert table.store_button.isVisible()
        table.table.setCurrentCell(1, 1)  # LANG: nothing secret to store
        assert not table.store_button.isEnabled()
        table.table.setCurrentCell(0, 1)
        assert table.store_button.isEnabled() and table.displayed(0) == MASK
        qtbot.mouseClick(table.store_button, Qt.MouseButton.LeftButton)

        await until(lambda: table.rows()[0] == ("GITHUB_TOKEN", "${keyring:gh/GITHUB_TOKEN}"))
        assert Vault().get("gh/GITHUB_TOKEN") == TOKEN
        assert table.displayed(0) == "${keyring:gh/GITHUB_TOKEN}"  # a reference is shown, not masked
        item = table.table.item(0, 1)
        assert item is not None and not item.flags() & Qt.ItemFlag.ItemIsEditable
        assert not table.store_button.isEnabled()  # nothing left to store in that row
        assert "stored in the keyring as gh/GITHUB_TOKEN" in editor.keyring_note.text()
        assert "not encrypted" in editor.keyring_note.text()  # the test's keyring is the file fallback
        assert TOKEN not in editor.keyring_note.text()

        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await until(lambda: not isValid(editor))
        on_disk = ctx.control.path.read_text(encoding="utf-8")
        assert "${keyring:gh/GITHUB_TOKEN}" in on_disk and TOKEN not in on_disk
        backup = ctx.control.path.with_name("config.json.bak")  # the file before Save: scrubbed too
        await until(lambda: TOKEN not in backup.read_text(encoding="utf-8"))
        assert "${keyring:gh/GITHUB_TOKEN}" in backup.read_text(encoding="utf-8")
        downstream = ctx.engine.downstreams["gh"]
        await until(lambda: downstream.status.state is State.READY and downstream.process is not first_pid)
        result = await downstream.call_tool("env", {"name": "GITHUB_TOKEN"})
        assert isinstance(result, types.CallToolResult)
        assert text_of(result) == "present sha256:" + hashlib.sha256(TOKEN.encode()).hexdigest()
        assert ctx.errors.problems == []


async def test_the_import_preview_offers_to_move_the_secrets_to_the_keyring(tmp_path: Path, qtbot: QtBot) -> None:
    home = tmp_path / "user"
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    servers = {"gh": fixture("--env-tool", env={"GITHUB_TOKEN": TOKEN, "LANG": "C.UTF-8"})}
    cursor.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    before = cursor.read_bytes()
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=["mcpmanager"])
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 1)
        page.rows[0].import_.click()
        await until(lambda: page.import_preview is not None and page.import_preview.isVisible())
        preview = page.import_preview
        assert preview is not None
        shown = preview.summary.text() + preview.moves.text() + preview.to_keyring.text()
        assert "gh: env GITHUB_TOKEN=*** → keyring entry gh/GITHUB_TOKEN" in preview.moves.text()
        assert TOKEN not in shown and preview.to_keyring.isEnabled() and not preview.to_keyring.isChecked()
        assert "not encrypted" in preview.moves.text()  # where they would go, plainly: the file fallback
        preview.to_keyring.setChecked(True)
        preview.accept()
        await until(lambda: "gh" in ctx.engine.config.servers)
        on_disk = json.loads(ctx.control.path.read_text(encoding="utf-8"))
        assert on_disk["mcpServers"]["gh"]["env"] == {"GITHUB_TOKEN": "${keyring:gh/GITHUB_TOKEN}", "LANG": "C.UTF-8"}
        assert Vault().get("gh/GITHUB_TOKEN") == TOKEN
        assert page.message.text() == "Imported 1 server from Cursor. Their secrets are in the keyring."
        downstream = ctx.engine.downstreams["gh"]
        await until(lambda: downstream.status.state is State.READY)
        result = await downstream.call_tool("env", {"name": "GITHUB_TOKEN"})
        assert isinstance(result, types.CallToolResult)
        assert text_of(result) == "present sha256:" + hashlib.sha256(TOKEN.encode()).hexdigest()
        assert cursor.read_bytes() == before and ctx.errors.problems == []
