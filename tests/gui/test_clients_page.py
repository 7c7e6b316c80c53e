"""The Clients page, offscreen, in front of a real engine: the endpoint and token, one row per client
found in a fixture home, and install / undo / import from the page landing in the fixture files."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.install import STASH_KEY
from mcpmanager.core.serve.bearer_token import ensure_token, token_path
from mcpmanager.gui.clients_page import ClientRow, ClientsPage
from tests.helpers.client_samples import files_under, parse, user_home
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until

COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]


def row_of(page: ClientsPage, label: str) -> ClientRow:
    return next(row for row in page.rows if row.target.label == label)


async def test_endpoint_token_and_the_clients_found(tmp_path: Path, qtbot: QtBot) -> None:
    home = user_home(tmp_path)
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        page.show()
        assert page.endpoint.text() == "" and page.endpoint.placeholderText() == "not serving over HTTP yet"
        assert page.token.text() == "" and page.token.placeholderText() == "no token yet"
        assert not page.copy_token.isEnabled()
        assert "No token yet" in page.token_note.text()

        await until(lambda: len(page.rows) == 4)
        assert [(r.target.label, r.target.path.relative_to(home).as_posix()) for r in page.rows] == [
            ("Claude Desktop", ".config/Claude/claude_desktop_config.json"),
            ("Cursor", ".cursor/mcp.json"),
            ("VS Code", ".config/Code/User/mcp.json"),
            ("Claude Code", ".claude.json"),
        ]
        assert all(r.state.text() == "not installed" for r in page.rows)

        # The engine starts serving over HTTP and makes its token.
        ctx.engine.endpoint = "http://127.0.0.1:43210/mcp"
        token = ensure_token(ctx.engine.paths.runtime_dir)
        ctx.signals.serversChanged.emit()
        await until(lambda: page.endpoint.text() == "http://127.0.0.1:43210/mcp")
        assert page.discovery_url.text() == "http://127.0.0.1:43210/mcp/discovery"
        assert page.direct_url.text() == "http://127.0.0.1:43210/mcp/direct"
        assert page.token.text() == token
        assert page.token.echoMode() == QLineEdit.EchoMode.Password  # masked until revealed
        page.reveal.click()
        assert page.token.echoMode() == QLineEdit.EchoMode.Normal and page.reveal.text() == "Hide"
        page.copy_token.click()
        assert QGuiApplication.clipboard().text() == token
        page.direct_url.property("copyButton").click()
        assert QGuiApplication.clipboard().text() == "http://127.0.0.1:43210/mcp/direct"
        assert str(token_path(ctx.engine.paths.runtime_dir)) in page.token_note.text()
        assert not ctx.errors.problems


async def test_install_and_undo_from_the_page(tmp_path: Path, qtbot: QtBot) -> None:
    home = user_home(tmp_path)
    original = files_under(home)
    cursor = home / ".cursor/mcp.json"
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 4)
        row = row_of(page, "Cursor")
        row.mode.setCurrentText("direct")
        row.install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        assert page.preview.change.action == "install"
        assert '+      "args": ["connect", "--mode", "direct"]' in page.preview.diff.toPlainText()
        assert files_under(home) == original  # nothing written before the confirmation
        page.preview.accept()
        await until(lambda: "mcpmanager" in parse(cursor)["mcpServers"])  # type: ignore[operator]
        await until(lambda: row_of(page, "Cursor").state.text() == "installed, direct mode")
        assert parse(cursor)["mcpServers"]["mcpmanager"] == {  # type: ignore[index]
            "command": COMMAND[0],
            "args": ["connect", "--mode", "direct"],
        }
        [backup] = list_backups(cursor)
        assert backup.read_bytes() == original[".cursor/mcp.json"]
        assert "Installed mcpmanager in Cursor" in page.message.text()

        # Installing again: nothing to confirm, nothing written.
        row_of(page, "Cursor").install.click()
        await until(lambda: "already installed" in page.message.text())

        row = row_of(page, "Cursor")
        assert row.undo.isEnabled()
        row.undo.click()
        await until(lambda: page.preview is not None and page.preview.change.action == "undo")
        assert page.preview is not None
        page.preview.accept()
        await until(lambda: files_under(home) == original)  # byte for byte, the backup gone
        await until(lambda: row_of(page, "Cursor").state.text() == "not installed")
        assert not ctx.errors.problems


async def test_cancelling_the_preview_writes_nothing(tmp_path: Path, qtbot: QtBot) -> None:
    home = user_home(tmp_path, "macos")
    original = files_under(home)
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="darwin", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 4)
        row_of(page, "VS Code").install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        page.preview.reject()
        await until(lambda: page.preview is not None and not page.preview.isVisible())
        assert files_under(home) == original


async def test_import_then_install_turning_off_what_mcpmanager_serves(tmp_path: Path, qtbot: QtBot) -> None:
    home = tmp_path / "user"
    cursor = home / ".cursor/mcp.json"
    cursor.parent.mkdir(parents=True)
    servers = {"notes": fixture("--name", "notes"), "weather": fixture("--name", "weather")}
    text = json.dumps({"mcpServers": servers, "other": [1, 2.50]}, indent=2).replace("2.5", "2.50")
    cursor.write_text(text)
    async with gui_context(tmp_path / "engine", {"notes": fixture("--name", "notes")}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 1)
        row = page.rows[0]
        assert row.state.text() == "not installed; also served by mcpmanager (tools loaded twice): notes"

        row.import_.click()
        await until(lambda: page.import_preview is not None and page.import_preview.isVisible())
        assert page.import_preview is not None
        page.import_preview.accept()
        await until(lambda: "weather" in ctx.engine.config.servers)
        await until(lambda: page.message.text() == "Imported 1 server from Cursor (1 already in mcpmanager).")
        written = json.loads(ctx.control.path.read_text())
        assert list(written["mcpServers"]) == ["notes", "weather"]
        await until(lambda: "notes, weather" in page.rows[0].state.text())

        page.disable_served.setChecked(True)
        page.rows[0].install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        assert "Turned off there (mcpmanager serves them): notes, weather" in page.preview.summary.text()
        page.preview.accept()
        await until(lambda: STASH_KEY in parse(cursor))
        doc = parse(cursor)
        assert list(doc["mcpServers"]) == ["mcpmanager"]  # type: ignore[call-overload]
        assert doc[STASH_KEY] == servers and doc["other"] == [1, 2.5]
        assert "2.50" in cursor.read_text()  # written as text, not re-serialized
        await until(lambda: "turned off here by mcpmanager: notes, weather" in page.rows[0].state.text())

        page.rows[0].undo.click()
        await until(lambda: page.preview is not None and page.preview.change.action == "undo")
        assert page.preview is not None
        page.preview.accept()
        await until(lambda: cursor.read_text() == text)
        assert not ctx.errors.problems


async def test_a_broken_client_file_is_shown_and_reported_not_written(tmp_path: Path, qtbot: QtBot) -> None:
    home = user_home(tmp_path, "broken")
    original = files_under(home)
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) >= 3)
        claude = row_of(page, "Claude Desktop")
        assert claude.state.text().startswith("cannot be changed: ")
        assert "invalid JSON: Expecting ',' delimiter; not changed" in claude.state.text()
        assert not claude.install.isEnabled()
        # The file broke after the page looked: the refusal reaches the error bar, in one line.
        vscode = row_of(page, "VS Code")
        vscode.target.path.write_text('{"servers": [}')
        vscode.install.click()
        await until(lambda: bool(ctx.errors.problems))
        title = ctx.errors.problems[-1].title
        assert title.startswith("Could not install mcpmanager in VS Code: ") and "invalid JSON" in title
        assert page.preview is None
        vscode.target.path.write_bytes(original[".config/Code/User/mcp.json"])
        assert files_under(home) == original


async def test_windsurf_and_gemini_cli_are_listed_installed_and_undone(tmp_path: Path, qtbot: QtBot) -> None:
    """The page lists every client of `CLIENTS` that is found: Windsurf and Gemini CLI too (their
    sample files, tests/data/clients); install and undo from the page keep the settings byte for byte."""
    home = tmp_path / "user"
    samples = Path(__file__).resolve().parents[1] / "data" / "clients"
    for relative, sample in (
        (".codeium/windsurf/mcp_config.json", samples / "windsurf/mcp_config.json"),
        (".gemini/settings.json", samples / "gemini-cli/settings.json"),
    ):
        (home / relative).parent.mkdir(parents=True)
        (home / relative).write_bytes(sample.read_bytes())
    original = files_under(home)
    gemini = home / ".gemini/settings.json"
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 2)
        assert [(r.target.label, r.target.path.relative_to(home).as_posix()) for r in page.rows] == [
            ("Windsurf", ".codeium/windsurf/mcp_config.json"),
            ("Gemini CLI", ".gemini/settings.json"),
        ]
        assert all(r.state.text() == "not installed" and r.import_.isEnabled() for r in page.rows)
        row_of(page, "Gemini CLI").install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        assert '+    "mcpmanager": {' in page.preview.diff.toPlainText()
        assert files_under(home) == original
        page.preview.accept()
        await until(lambda: "mcpmanager" in parse(gemini)["mcpServers"])  # type: ignore[operator]
        assert parse(gemini)["theme"] == "Dracula"
        await until(lambda: row_of(page, "Gemini CLI").undo.isEnabled())
        row_of(page, "Gemini CLI").undo.click()
        await until(lambda: page.preview is not None and page.preview.change.action == "undo")
        assert page.preview is not None
        page.preview.accept()
        await until(lambda: files_under(home) == original)  # byte for byte, the backup gone
        assert not ctx.errors.problems


async def test_codex_is_listed_installed_and_undone(tmp_path: Path, qtbot: QtBot) -> None:
    """Codex's TOML file (tests/data/clients/codex): listed, installed from the page with its table
    appended, undone byte for byte."""
    home = tmp_path / "user"
    path = home / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes((Path(__file__).resolve().parents[1] / "data/clients/codex/config.toml").read_bytes())
    original = files_under(home)
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 1)
        assert [(r.target.label, r.target.path) for r in page.rows] == [("Codex", path)]
        row_of(page, "Codex").install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        assert "+[mcp_servers.mcpmanager]" in page.preview.diff.toPlainText()
        assert "ghp_FAKE00000000000000000000000000codex" not in page.preview.diff.toPlainText()
        page.preview.accept()
        await until(lambda: "[mcp_servers.mcpmanager]" in path.read_text())
        assert path.read_bytes().startswith(original[".codex/config.toml"])
        await until(lambda: row_of(page, "Codex").undo.isEnabled())
        row_of(page, "Codex").undo.click()
        await until(lambda: page.preview is not None and page.preview.change.action == "undo")
        assert page.preview is not None
        page.preview.accept()
        await until(lambda: files_under(home) == original)
        assert not ctx.errors.problems
