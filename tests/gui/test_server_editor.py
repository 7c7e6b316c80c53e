"""The server editor in front of a real engine: what is saved lands in the config file and the engine
runs it; what is wrong is said next to the form and nothing is saved; tokens stay masked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QTableWidget, QTableWidgetItem, QWidget
from pytestqt.qtbot import QtBot
from shiboken6 import isValid

from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig
from mcpmanager.core.config.to_keyring import move_to_keyring
from mcpmanager.core.engine.control import Control, ControlError
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.vault.store import Vault
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.secret_table import MASK
from mcpmanager.gui.server_editor import ServerEditor, copy_name
from tests.helpers.fixture_servers import FIXTURE_SERVER, fixture
from tests.helpers.gui import gui_context, until


def on_disk(ctx: GuiContext) -> dict[str, Any]:
    return json.loads(ctx.control.path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def state(ctx: GuiContext, name: str) -> State | None:
    downstream = ctx.engine.downstreams.get(name)
    return downstream.status.state if downstream is not None else None


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    item = table.item(row, column)
    assert item is not None, f"no item at row {row}, column {column}"
    return item


@pytest.fixture
def owner(qtbot: QtBot) -> QWidget:
    """The editors' parent, as the Servers page is theirs: an editor is its own window all the same.
    qtbot closes the parent at the end, taking any editor still open with it (a saved editor has
    closed and deleted itself already)."""
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


def open_editor(
    ctx: GuiContext, owner: QWidget, server: ServerConfig | None = None, *, duplicate: bool = False
) -> tuple[ServerEditor, list[str]]:
    if duplicate:
        assert server is not None
        editor = ServerEditor.duplicate(ctx, server, owner)
    else:
        editor = ServerEditor(ctx, server, owner)
    editor.show()
    saved: list[str] = []
    editor.saved.connect(saved.append)
    return editor, saved


def click(qtbot: QtBot, button: Any) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


async def test_add_a_server_it_is_saved_and_started(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        editor, saved = open_editor(ctx, owner)
        assert editor.windowTitle() == "Add server"
        assert editor.isWindow() and not editor.isModal()
        qtbot.keyClicks(editor.name, "gamma")
        assert editor.kind_key() == "stdio"
        qtbot.keyClicks(editor.command, sys.executable)
        editor.args.setPlainText(f"{FIXTURE_SERVER}\n--name\ngamma\n\n")  # blank lines are not arguments
        editor.env.add_row("GAMMA_TOKEN", "fake-gamma-token")
        editor.start_timeout.setValue(15)
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["gamma"])
        await until(lambda: not isValid(editor))  # closed, and deleted (the opener forgets it)
        assert on_disk(ctx)["mcpServers"]["gamma"] == {
            "command": sys.executable,
            "args": [str(FIXTURE_SERVER), "--name", "gamma"],
            "env": {"GAMMA_TOKEN": "fake-gamma-token"},
            "startTimeout": 15,
        }
        await until(lambda: state(ctx, "gamma") is State.READY)
        assert ctx.errors.problems == []


async def test_edit_and_rename_a_server(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    servers = {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta", env={"KEEP": "kept-value"})}
    async with gui_context(tmp_path, servers) as ctx:
        await until(lambda: state(ctx, "beta") is State.READY)
        editor, saved = open_editor(ctx, owner, ctx.engine.config.servers["beta"])
        assert editor.windowTitle() == "Edit server beta"
        assert editor.name.text() == "beta"
        assert editor.command.text() == sys.executable
        assert editor.args.toPlainText() == f"{FIXTURE_SERVER}\n--name\nbeta"
        assert editor.env.rows() == [("KEEP", "kept-value")]
        editor.name.clear()
        qtbot.keyClicks(editor.name, "delta")
        editor.env.add_row("ADDED", "added-value")
        editor.args.setPlainText(f"{FIXTURE_SERVER}\n--name\ndelta")
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["delta"])
        document = on_disk(ctx)
        assert list(document["mcpServers"]) == ["alpha", "delta"]  # renamed in place
        assert document["mcpServers"]["delta"]["env"] == {"KEEP": "kept-value", "ADDED": "added-value"}
        assert document["mcpServers"]["delta"]["args"][-1] == "delta"
        await until(lambda: state(ctx, "delta") is State.READY and "beta" not in ctx.engine.downstreams)
        tools = {entry.key for entry in ctx.engine.catalogue.entries()}
        assert "delta:echo" in tools and "beta:echo" not in tools


async def test_invalid_input_is_said_inline_and_nothing_is_saved(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        before = ctx.control.path.read_bytes()
        editor, saved = open_editor(ctx, owner)
        click(qtbot, editor.save_button)
        assert editor.errors.isVisible()
        assert editor.errors.text().splitlines() == [
            "Name: required",
            "Command: required (the program that runs the server)",
        ]
        qtbot.keyClicks(editor.name, "bad name")
        editor.env.add_row("", "orphan-secret-value")
        editor.env.add_row("TOKEN", "one-secret-value")
        editor.env.add_row("TOKEN", "two-secret-value")
        editor.env.add_row("A=B", "x")
        editor.env.add_row("", "")  # a wholly empty row is ignored
        click(qtbot, editor.save_button)
        assert editor.errors.text().splitlines() == [
            "Name: use letters, digits, '-', '_' or '.', starting with a letter or digit",
            "Command: required (the program that runs the server)",
            "env: row 1 has a value but no name",
            "env: 'TOKEN' is there twice; keep one",
            "env: 'A=B': a variable name has no '=' and no spaces",
        ]
        assert "secret-value" not in editor.errors.text()
        assert editor.name.styleSheet() and editor.command.styleSheet() and editor.env.table.styleSheet()
        # The remote types: a URL, and header names.
        editor.kind.setCurrentIndex(1)
        assert editor.url.isVisible() and not editor.command.isVisible()
        editor.name.setText("remote")
        editor.url.setText("ftp://files.example.invalid/mcp")
        editor.headers.add_row("Bad Header", "Bearer fake")
        click(qtbot, editor.save_button)
        assert editor.errors.text().splitlines() == [
            "URL: must start with http:// or https:// and a host",
            "headers: 'Bad Header': not a valid HTTP header name",
        ]
        assert not editor.name.styleSheet()  # the name is fine now
        editor.url.setText("https://")
        click(qtbot, editor.save_button)
        assert editor.errors.text().splitlines()[0] == "URL: must start with http:// or https:// and a host"
        await until(lambda: state(ctx, "alpha") is State.READY)
        assert saved == [] and editor.isVisible()
        assert ctx.control.path.read_bytes() == before
        assert set(ctx.engine.downstreams) == {"alpha"}


async def test_env_and_header_values_are_masked_until_revealed(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    servers = {
        "alpha": fixture("--name", "alpha", env={"API_TOKEN": "fake-alpha-token"}),
        "remote": {
            "type": "http",
            "url": "https://example.invalid/mcp",
            "headers": {"Authorization": "Bearer x"},
            "disabled": True,
        },
    }
    async with gui_context(tmp_path, servers) as ctx:
        editor, _ = open_editor(ctx, owner, ctx.engine.config.servers["alpha"])
        table = editor.env.table
        assert not editor.env.reveal.isChecked()
        assert editor.env.displayed(0) == MASK
        assert cell(table, 0, 0).text() == "API_TOKEN"  # names are not secret
        shown = {cell(table, 0, c).data(Qt.ItemDataRole.DisplayRole) for c in range(2)}
        assert "fake-alpha-token" not in shown
        editor.env.reveal.setChecked(True)
        assert editor.env.displayed(0) == "fake-alpha-token"
        editor.env.reveal.setChecked(False)
        assert editor.env.displayed(0) == MASK
        # Typing a value: the cell editor is a password field while masked; the value is kept whole.
        table.editItem(cell(table, 0, 1))
        line = table.findChild(QLineEdit)
        assert isinstance(line, QLineEdit) and line.isVisible()
        assert line.echoMode() == QLineEdit.EchoMode.Password
        assert line.text() == "fake-alpha-token"
        line.selectAll()
        qtbot.keyClicks(line, "typed-new-token")
        qtbot.keyClick(line, Qt.Key.Key_Return)
        await until(lambda: editor.env.rows() == [("API_TOKEN", "typed-new-token")])
        assert editor.env.displayed(0) == MASK
        editor.env.reveal.setChecked(True)
        table.editItem(cell(table, 0, 1))
        revealed = table.findChild(QLineEdit)
        assert isinstance(revealed, QLineEdit) and revealed.echoMode() == QLineEdit.EchoMode.Normal
        # Headers of a remote server, likewise; an empty value shows as empty.
        remote, _ = open_editor(ctx, owner, ctx.engine.config.servers["remote"])
        assert remote.kind_key() == "http" and remote.headers.isVisible() and not remote.env.isVisible()
        assert remote.headers.displayed(0) == MASK
        row = remote.headers.add_row("X-Empty", "")
        assert remote.headers.displayed(row) == ""
        remote.headers.reveal.setChecked(True)
        assert remote.headers.displayed(0) == "Bearer x"


async def test_harmless_values_are_shown_and_a_renamed_row_follows_its_name(
    tmp_path: Path, qtbot: QtBot, owner: QWidget
) -> None:
    env = {
        "LANG": "C.UTF-8",
        "DATA_DIR": "/srv/data",
        "STRIPE_SECRET_KEY": "fake-stripe-secret",
        "GH": "ghp_" + "F" * 36,
    }
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha", env=env, disabled=True)}) as ctx:
        editor, _ = open_editor(ctx, owner, ctx.engine.config.servers["alpha"])
        table = editor.env.table
        # By name (STRIPE_SECRET_KEY) or by shape (a GitHub token under a name that says nothing).
        assert [editor.env.displayed(row) for row in range(4)] == ["C.UTF-8", "/srv/data", MASK, MASK]
        row = editor.env.add_row("LOG_LEVEL", "debug-verbose")
        assert editor.env.displayed(row) == "debug-verbose"
        cell(table, row, 0).setText("LOG_TOKEN")  # renamed into a secret: masked at once
        assert editor.env.displayed(row) == MASK
        cell(table, row, 0).setText("LOG_LEVEL")
        assert editor.env.displayed(row) == "debug-verbose"
        # A harmless row is edited in the clear.
        table.editItem(cell(table, 0, 1))
        line = table.findChild(QLineEdit)
        assert isinstance(line, QLineEdit) and line.echoMode() == QLineEdit.EchoMode.Normal


async def test_secret_arguments_and_url_are_masked_and_read_only_until_revealed(
    tmp_path: Path, qtbot: QtBot, owner: QWidget
) -> None:
    key = "sk_live_" + "F" * 24
    args = ["-y", "@stripe/mcp", "--tools=all", "--api-key", key, "--token=fake-opaque-token", "--port", "8080"]
    servers = {
        "stripe": {"command": "npx", "args": args, "disabled": True},
        "remote": {"type": "http", "url": "https://me:fake-url-password@example.invalid/mcp?lang=en", "disabled": True},
        "plain": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "disabled": True},
    }
    async with gui_context(tmp_path, servers) as ctx:
        before = on_disk(ctx)
        editor, saved = open_editor(ctx, owner, ctx.engine.config.servers["stripe"])
        shown = "-y\n@stripe/mcp\n--tools=all\n--api-key\n***\n--token=***\n--port\n8080"
        assert editor.args.toPlainText() == shown
        assert editor.args.isReadOnly() and editor.args_box.reveal.isVisible()
        editor.args_box.reveal.setChecked(True)
        assert editor.args.toPlainText() == "\n".join(args) and not editor.args.isReadOnly()
        editor.args_box.reveal.setChecked(False)
        assert editor.args.toPlainText() == shown and editor.args.isReadOnly()
        click(qtbot, editor.save_button)  # saved while masked: the real arguments, unchanged
        await until(lambda: saved == ["stripe"])
        assert on_disk(ctx) == before
        # A change made once revealed is saved, and masked again when the editor shows it.
        editor, saved = open_editor(ctx, owner, ctx.engine.config.servers["stripe"])
        editor.args_box.reveal.setChecked(True)
        editor.args.setPlainText(editor.args.toPlainText().replace("8080", "9090"))
        editor.args_box.reveal.setChecked(False)
        assert editor.args.toPlainText() == shown.replace("8080", "9090")
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["stripe"])
        assert on_disk(ctx)["mcpServers"]["stripe"]["args"] == [*args[:-1], "9090"]
        # A URL's password likewise; arguments without a secret are plain and editable.
        remote, _ = open_editor(ctx, owner, ctx.engine.config.servers["remote"])
        assert remote.url.text() == "https://me:***@example.invalid/mcp?lang=en" and remote.url.isReadOnly()
        remote.url_box.reveal.setChecked(True)
        assert remote.url.text() == "https://me:fake-url-password@example.invalid/mcp?lang=en"
        plain, _ = open_editor(ctx, owner, ctx.engine.config.servers["plain"])
        assert plain.args.toPlainText() == "-y\n@modelcontextprotocol/server-everything"
        assert not plain.args.isReadOnly() and not plain.args_box.reveal.isVisible()


def paste(qtbot: QtBot, editor: ServerEditor, text: str) -> None:
    if not editor.paste_button.isChecked():
        click(qtbot, editor.paste_button)
    assert editor.paste_panel.isVisible()
    editor.paste_text.setPlainText(text)
    click(qtbot, editor.read_button)


async def test_pasting_a_claude_desktop_snippet_adds_both_servers(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        editor, saved = open_editor(ctx, owner)
        snippet = {
            "mcpServers": {
                "gamma": fixture("--name", "gamma"),
                "alpha": {"command": "elsewhere"},
                "delta": fixture("--name", "delta", env={"DELTA_TOKEN": "fake-delta-token"}),
            },
            "globalShortcut": "Ctrl+Space",
        }
        paste(qtbot, editor, json.dumps(snippet, indent=2))
        assert editor.paste_message.text() == "Add 2 servers: gamma, delta? Already configured, left out: alpha."
        assert editor.add_all_button.isVisible() and editor.add_all_button.text() == "Add all 2"
        assert editor.name.text() == ""  # the form is left alone
        click(qtbot, editor.add_all_button)
        await until(lambda: saved == ["gamma", "delta"])
        await until(lambda: not isValid(editor))
        document = on_disk(ctx)["mcpServers"]
        assert list(document) == ["alpha", "gamma", "delta"]
        assert document["alpha"] == fixture("--name", "alpha")
        assert document["delta"]["env"] == {"DELTA_TOKEN": "fake-delta-token"}
        await until(lambda: state(ctx, "gamma") is State.READY and state(ctx, "delta") is State.READY)


async def test_pasting_one_server_fills_the_form(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    async with gui_context(tmp_path, {}) as ctx:
        editor, saved = open_editor(ctx, owner)
        readme = (
            '"events": {\n  "type": "sse",\n  "url": "https://example.invalid/sse",\n  "headers": {"X-Key": "fake"}\n},'
        )
        paste(qtbot, editor, readme)
        assert editor.paste_message.text() == "Filled in from the pasted server. Check, then Save."
        assert (editor.name.text(), editor.kind_key(), editor.url.text()) == (
            "events",
            "sse",
            "https://example.invalid/sse",
        )
        assert editor.headers.rows() == [("X-Key", "fake")] and editor.headers.displayed(0) == MASK
        assert not editor.add_all_button.isVisible() and saved == []
        # A bare entry has no name: the form keeps its own, and asks for one when it is empty.
        editor.name.clear()
        paste(qtbot, editor, '{"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]}')
        assert editor.paste_message.text() == "Filled in from the pasted server. Type its name above, then Save."
        assert (editor.name.text(), editor.kind_key(), editor.command.text()) == ("", "stdio", "uvx")
        assert editor.args.toPlainText() == "mcp-server-time\n--local-timezone\nUTC"
        # A broken paste says where, and changes nothing.
        paste(qtbot, editor, '{"mcpServers": {"x": {"command": "uvx", "args": [1]}}}')
        assert editor.paste_message.text() == "pasted text:1:50: mcpServers.x.args[0]: expected a string, got number"
        assert editor.command.text() == "uvx"
        assert not ctx.control.path.exists() or "x" not in on_disk(ctx).get("mcpServers", {})


async def test_a_refused_change_keeps_the_window_open_with_the_reason(
    tmp_path: Path, qtbot: QtBot, owner: QWidget
) -> None:
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        before = ctx.control.path.read_bytes()
        editor, saved = open_editor(ctx, owner)
        qtbot.keyClicks(editor.name, "alpha")  # taken: Control refuses it
        qtbot.keyClicks(editor.command, sys.executable)
        editor.args.setPlainText(f"{FIXTURE_SERVER}\n--name\nother")
        click(qtbot, editor.save_button)
        assert not editor.save_button.isEnabled()  # saving
        await until(lambda: editor.save_button.isEnabled())
        assert editor.errors.text() == "not saved: a server named 'alpha' exists already"
        assert isValid(editor) and editor.isVisible() and saved == []
        assert ctx.control.path.read_bytes() == before
        assert ctx.errors.problems == []  # said in the window, not in the error bar
        editor.name.setText("other")
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["other"])
        await until(lambda: state(ctx, "other") is State.READY)


async def test_a_config_file_that_does_not_load_is_said_once(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    """The editor said "not saved: not saved: ..." when the file on disk did not load."""
    async with gui_context(tmp_path, {"alpha": fixture("--name", "alpha")}) as ctx:
        editor, saved = open_editor(ctx, owner)
        ctx.control.path.write_text('{"mcpServers": {"alpha": {"args": []}}}', encoding="utf-8")
        qtbot.keyClicks(editor.name, "other")
        qtbot.keyClicks(editor.command, sys.executable)
        click(qtbot, editor.save_button)
        await until(lambda: bool(editor.errors.text()))
        text = editor.errors.text()
        assert text.startswith("not saved: ") and text.count("not saved") == 1, text
        assert "mcpServers.alpha" in text and "fix the file first" in text
        assert saved == []


async def test_duplicate_gets_a_free_name_and_the_same_settings(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    servers = {"alpha": fixture("--name", "alpha", env={"K": "v"}), "alpha-copy": {"command": "x", "disabled": True}}
    async with gui_context(tmp_path, servers) as ctx:
        assert copy_name("alpha", set()) == "alpha-copy"
        assert copy_name("alpha", {"alpha-copy", "alpha-copy-2"}) == "alpha-copy-3"
        original = ctx.engine.config.servers["alpha"]
        editor, saved = open_editor(ctx, owner, original, duplicate=True)
        assert editor.name.text() == "alpha-copy-2"
        assert editor.windowTitle() == "Duplicate server alpha"
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["alpha-copy-2"])
        document = on_disk(ctx)["mcpServers"]
        assert document["alpha-copy-2"] == document["alpha"]
        assert list(document) == ["alpha", "alpha-copy", "alpha-copy-2"]  # added, nothing replaced
        await until(lambda: state(ctx, "alpha-copy-2") is State.READY)


async def test_a_disabled_sse_server_and_arguments_kept_exactly(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    odd = {"command": "tool", "args": ["", "two\nlines", "x"], "disabled": True}
    async with gui_context(tmp_path, {"odd": odd}) as ctx:
        editor, saved = open_editor(ctx, owner)
        editor.name.setText("events")
        editor.kind.setCurrentIndex(2)
        editor.url.setText("https://example.invalid/sse")
        editor.headers.add_row("Authorization", "Bearer fake-sse-token")
        editor.disabled.setChecked(True)
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["events"])
        assert on_disk(ctx)["mcpServers"]["events"] == {
            "type": "sse",
            "url": "https://example.invalid/sse",
            "headers": {"Authorization": "Bearer fake-sse-token"},
            "disabled": True,
        }
        await until(lambda: state(ctx, "events") is State.DISABLED)
        # Arguments one per line cannot show an empty one or one with a line break: left as loaded,
        # they are saved exactly as they were.
        server = ctx.engine.config.servers["odd"]
        assert isinstance(server, StdioServerConfig)
        again, saved_again = open_editor(ctx, owner, server)
        again.cwd.setText("/tmp")
        click(qtbot, again.save_button)
        await until(lambda: saved_again == ["odd"])
        assert on_disk(ctx)["mcpServers"]["odd"]["args"] == ["", "two\nlines", "x"]
        assert on_disk(ctx)["mcpServers"]["odd"]["cwd"] == "/tmp"


async def test_browse_opens_a_non_modal_file_dialog(tmp_path: Path, qtbot: QtBot, owner: QWidget) -> None:
    async with gui_context(tmp_path, {}) as ctx:
        editor, _ = open_editor(ctx, owner)
        click(qtbot, editor.browse_button)
        dialog = editor._dialog
        assert dialog is not None and dialog.isVisible()
        dialog.fileSelected.emit(sys.executable)
        assert editor.command.text() == sys.executable
        dialog.reject()


async def test_a_refusal_midway_through_a_paste_keeps_the_rest_to_add(
    tmp_path: Path, qtbot: QtBot, owner: QWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with gui_context(tmp_path, {}) as ctx:
        real = ctx.control.put_server
        refuse = {"delta"}

        async def put_server(
            server: ServerConfig, replacing: str | None = None, base: ServerConfig | None = None
        ) -> None:
            if server.name in refuse:
                raise ControlError("cannot save config.json: No space left on device")
            await real(server, replacing, base)

        monkeypatch.setattr(ctx.control, "put_server", put_server)
        editor, saved = open_editor(ctx, owner)
        snippet = {"gamma": {"command": "tool", "disabled": True}, "delta": {"command": "tool", "disabled": True}}
        paste(qtbot, editor, json.dumps(snippet))
        click(qtbot, editor.add_all_button)
        await until(lambda: editor.add_all_button.isEnabled())
        assert editor.errors.text() == "Added gamma; not saved: cannot save config.json: No space left on device"
        assert saved == ["gamma"] and editor.isVisible()
        assert list(on_disk(ctx)["mcpServers"]) == ["gamma"]
        assert editor.add_all_button.text() == "Add all 1"
        refuse.clear()
        click(qtbot, editor.add_all_button)
        await until(lambda: saved == ["gamma", "delta"])
        assert list(on_disk(ctx)["mcpServers"]) == ["gamma", "delta"]


async def test_saving_an_editor_opened_before_a_secrets_move_keeps_the_secret_in_the_keyring(
    tmp_path: Path, qtbot: QtBot, owner: QWidget
) -> None:
    servers = {"beta": fixture("--name", "beta", env={"BETA_TOKEN": "fake-beta-token"})}
    async with gui_context(tmp_path, servers) as ctx:
        opened = ctx.engine.config.servers["beta"]
        editor, saved = open_editor(ctx, owner, opened)
        # `mcpmanager secrets move beta` in another program while the window is open.
        _, moves = move_to_keyring(opened, Vault())
        await Control(ctx.control.path).move_secrets("beta", moves)
        editor.args.setPlainText(f"{FIXTURE_SERVER}\n--name\nbeta\n--start-delay\n0")
        click(qtbot, editor.save_button)
        await until(lambda: saved == ["beta"])
        entry = on_disk(ctx)["mcpServers"]["beta"]
        assert entry["env"] == {"BETA_TOKEN": "${keyring:beta/BETA_TOKEN}"}  # not the plain text back
        assert entry["args"][-2:] == ["--start-delay", "0"]
        assert "fake-beta-token" not in ctx.control.path.read_text(encoding="utf-8")
