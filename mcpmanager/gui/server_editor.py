"""The server editor: a window (non-modal) to add, edit or duplicate one server, or to add several at
once from pasted client JSON. Everything is checked here first, with the reason next to the form;
then `Control.put_server` saves and applies it, and a change it refuses keeps the window open with
its message. Secrets are masked until revealed, by the core's one rule: the values of secret
environment variables and headers (harmless ones, such as LANG or PATH, are shown), and secrets in
the arguments (`--api-key sk_live_…`) and the URL (`user:password@`, `?token=`), which stay
read-only while masked. A secret env or header row can be stored in the keyring ("Store in
keyring"): its value goes to the OS keyring as `SERVER/KEY` at once (a worker thread: the keyring
blocks) and the row holds the reference, saved with the rest.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from mcpmanager.core.config.names import SERVER_NAME, free_name
from mcpmanager.core.config.pasted import SnippetError, parse_snippet
from mcpmanager.core.config.secrets import Masker, argument_secrets, mask, mask_arguments
from mcpmanager.core.config.servers import HttpServerConfig, HttpTransport, ServerConfig, StdioServerConfig
from mcpmanager.core.config.to_keyring import Move, entry_name, split_value
from mcpmanager.core.engine.control import ControlError
from mcpmanager.core.vault.references import reference
from mcpmanager.core.vault.store import Vault, VaultError
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.secret_table import MaskedText, SecretTable

KINDS = [("stdio", "Local command (stdio)"), ("http", "Streamable HTTP"), ("sse", "SSE (legacy HTTP)")]
_ENV_NAME = re.compile(r"^[^=\s]+$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)
_ERROR_STYLE = "color: #cf222e;"
_INVALID_STYLE = "border: 1px solid #cf222e;"


class ServerEditor(QWidget):
    """Add (`server=None`) or edit one server in its own window. Emits `saved(name)` for each server
    saved, then closes (and is deleted)."""

    saved = Signal(str)

    def __init__(self, ctx: GuiContext, server: ServerConfig | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # the opener forgets it on `destroyed`
        self.ctx = ctx
        self.original = server.name if server is not None else None
        self._base = server  # what the form was filled from: a save changes only what differs from it
        self.pasted: list[ServerConfig] = []  # several servers read from a paste, waiting for "Add all"
        self._loaded_args: tuple[str, list[str]] = ("", [])
        self._dialog: QFileDialog | None = None
        self._stored: list[Move] = []  # values stored in the keyring here: scrubbed from the backup on Save
        self.setWindowTitle(f"Edit server {server.name}" if server else "Add server")
        self.resize(620, 640)
        self._build()
        if server is not None:
            self.load(server)
        self._kind_changed()

    @classmethod
    def duplicate(cls, ctx: GuiContext, server: ServerConfig, parent: QWidget | None = None) -> ServerEditor:
        """An editor adding a copy of `server` under a free name (`<name>-copy`, `<name>-copy-2`, …)."""
        editor = cls(ctx, None, parent)
        editor.load(replace(server, name=copy_name(server.name, set(ctx.engine.config.servers))))
        editor.setWindowTitle(f"Duplicate server {server.name}")
        return editor

    # Building -------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.paste_button = QPushButton("Paste JSON…")
        self.paste_button.setCheckable(True)
        self.paste_button.setToolTip("Fill the form (or add several servers) from a client's JSON or a README")
        self.paste_button.toggled.connect(self._toggle_paste)
        self.paste_text = QPlainTextEdit()
        self.paste_text.setPlaceholderText(
            'Paste Claude Desktop, Cursor, VS Code or README JSON: {"mcpServers": {…}}, {"servers": {…}}, '
            '"name": {"command": …} or {"command": …}'
        )
        self.paste_text.setMaximumHeight(140)
        self.read_button = QPushButton("Read pasted JSON")
        self.read_button.clicked.connect(self.read_paste)
        self.paste_message = QLabel()
        self.paste_message.setWordWrap(True)
        self.paste_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.add_all_button = QPushButton("Add all")
        self.add_all_button.clicked.connect(self.add_pasted)
        self.paste_panel = QWidget()
        paste_row = QHBoxLayout()
        paste_row.addWidget(self.read_button)
        paste_row.addWidget(self.add_all_button)
        paste_row.addStretch(1)
        paste_layout = QVBoxLayout(self.paste_panel)
        paste_layout.setContentsMargins(0, 0, 0, 0)
        paste_layout.addWidget(self.paste_text)
        paste_layout.addLayout(paste_row)
        paste_layout.addWidget(self.paste_message)
        self.paste_panel.hide()
        self.add_all_button.hide()

        self.name = QLineEdit()
        self.name.setPlaceholderText("github")
        self.kind = QComboBox()
        for key, label in KINDS:
            self.kind.addItem(label, key)
        self.kind.currentIndexChanged.connect(self._kind_changed)

        self.command = QLineEdit()
        self.command.setPlaceholderText("npx, uvx, python, /full/path/to/server")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse_command)
        self.command_row = QWidget()
        command_layout = QHBoxLayout(self.command_row)
        command_layout.setContentsMargins(0, 0, 0, 0)
        command_layout.addWidget(self.command, 1)
        command_layout.addWidget(self.browse_button)
        self.args = QPlainTextEdit()
        self.args.setPlaceholderText("One argument per line, e.g.\n-y\n@modelcontextprotocol/server-github")
        self.args.setMaximumHeight(110)
        self.args_box = MaskedText(self.args, _masked_arguments, "arguments")
        self.env = SecretTable("env", "Variable")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("(optional) the folder the command runs in")

        self.url = QLineEdit()
        self.url.setPlaceholderText("https://example.com/mcp")
        self.url_box = MaskedText(self.url, mask, "URL")
        self.headers = SecretTable("headers", "Header")
        for table in (self.env, self.headers):
            table.offer_keyring(self.store_in_keyring)
        self.keyring_note = QLabel()
        self.keyring_note.setWordWrap(True)
        self.keyring_note.hide()

        self.disabled = QCheckBox("Disabled (kept in the config, not started)")
        self.start_timeout = QDoubleSpinBox()
        self.start_timeout.setRange(0, 3600)
        self.start_timeout.setDecimals(1)
        self.start_timeout.setSuffix(" s")
        self.start_timeout.setSpecialValueText("default")  # 0 = the supervisor's startTimeout
        self.start_timeout.setToolTip("How long the server may take to answer initialize and tools/list")
        self.start_timeout.setMaximumWidth(160)

        self.errors = QLabel()
        self.errors.setWordWrap(True)
        self.errors.setStyleSheet(_ERROR_STYLE)
        self.errors.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.errors.hide()
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.close)
        QShortcut(QKeySequence.StandardKey.Save, self, self.save)

        # One form for both types (its labels line up); the other type's rows are hidden, not cleared.
        self.form = QFormLayout()
        self.form.addRow("Name", self.name)
        self.form.addRow("Type", self.kind)
        self.form.addRow("Command", self.command_row)
        self.form.addRow("Arguments", self.args_box)
        self.form.addRow("Environment", self.env)
        self.form.addRow("Working folder", self.cwd)
        self.form.addRow("URL", self.url_box)
        self.form.addRow("Headers", self.headers)
        self.form.addRow("", self.disabled)
        self.form.addRow("Start timeout", self.start_timeout)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        top = QHBoxLayout()
        top.addStretch(1)
        top.addWidget(self.paste_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.paste_panel)
        layout.addLayout(self.form)
        layout.addStretch(1)
        layout.addWidget(self.keyring_note)
        layout.addWidget(self.errors)
        layout.addLayout(buttons)

    # Form <-> server ------------------------------------------------------------------------------

    def load(self, server: ServerConfig, *, keep_name: bool = False) -> None:
        """Fill the form from `server` (the other type's fields keep what they hold)."""
        if not keep_name:
            self.name.setText(server.name)
        if isinstance(server, StdioServerConfig):
            self.kind.setCurrentIndex(0)
            self.command.setText(server.command)
            text = "\n".join(server.args)
            # An argument that is empty or spans lines cannot be shown one per line: while the text is
            # left as loaded, the arguments are saved exactly as they were.
            self._loaded_args = (text, list(server.args))
            self.args_box.set_text(text)
            self.env.set_rows(server.env)
            self.cwd.setText(server.cwd or "")
        else:
            self.kind.setCurrentIndex(1 if server.transport == "http" else 2)
            self.url_box.set_text(server.url)
            self.headers.set_rows(server.headers)
        self.disabled.setChecked(server.disabled)
        self.start_timeout.setValue(server.start_timeout or 0)

    def kind_key(self) -> str:
        return str(self.kind.currentData())

    def _kind_changed(self) -> None:
        stdio = self.kind_key() == "stdio"
        for widget in (self.command_row, self.args_box, self.env, self.cwd):
            self.form.setRowVisible(widget, stdio)
        for widget in (self.url_box, self.headers):
            self.form.setRowVisible(widget, not stdio)

    def validate(self) -> ServerConfig | None:
        """The server the form describes, or None with the reasons shown next to the form."""
        errors: list[str] = []
        name = self.name.text().strip()
        if not name:
            errors.append("Name: required")
        elif not SERVER_NAME.match(name):
            errors.append("Name: use letters, digits, '-', '_' or '.', starting with a letter or digit")
        self._mark(self.name, bool(errors))
        disabled = self.disabled.isChecked()
        timeout = self.start_timeout.value() or None
        server: ServerConfig | None = None
        if self.kind_key() == "stdio":
            command = self.command.text().strip()
            if not command:
                errors.append("Command: required (the program that runs the server)")
            self._mark(self.command, not command)
            env, env_errors = self.env.check(_ENV_NAME, "a variable name has no '=' and no spaces")
            errors += env_errors
            self._mark(self.env.table, bool(env_errors))
            if not errors:
                server = StdioServerConfig(
                    name, command, self._args(), env, self.cwd.text().strip() or None, disabled, timeout
                )
        else:
            url = self.url_box.text().strip()
            bad_url = not re.match(r"^https?://[^\s/?#]+", url, re.IGNORECASE)
            if not url:
                errors.append("URL: required")
            elif bad_url:
                errors.append("URL: must start with http:// or https:// and a host")
            self._mark(self.url, bad_url)
            headers, header_errors = self.headers.check(_HEADER_NAME, "not a valid HTTP header name")
            errors += header_errors
            self._mark(self.headers.table, bool(header_errors))
            if not errors:
                transport: HttpTransport = "sse" if self.kind_key() == "sse" else "http"
                server = HttpServerConfig(name, url, headers, disabled, transport, timeout)
        self.show_errors(errors)
        return server

    def _args(self) -> list[str]:
        text = self.args_box.text()
        if text == self._loaded_args[0]:
            return list(self._loaded_args[1])
        return [line.strip() for line in text.splitlines() if line.strip()]

    def show_errors(self, errors: list[str]) -> None:
        self.errors.setText("\n".join(errors))
        self.errors.setVisible(bool(errors))

    @staticmethod
    def _mark(widget: QWidget, invalid: bool) -> None:
        widget.setStyleSheet(_INVALID_STYLE if invalid else "")

    # Saving ---------------------------------------------------------------------------------------

    def save(self) -> None:
        server = self.validate()
        if server is None:
            return
        self._busy(True)
        self.ctx.run(self._put([server], self.original), f"save server {server.name}")

    def add_pasted(self) -> None:
        if self.pasted:
            self._busy(True)
            names = ", ".join(s.name for s in self.pasted)
            self.ctx.run(self._put(list(self.pasted), None), f"add servers {names}")

    async def _put(self, servers: list[ServerConfig], replacing: str | None) -> None:
        """Save each server in turn; a refusal stops there and is shown here, the window open."""
        done: list[str] = []
        try:
            for server in servers:
                await self.ctx.control.put_server(server, replacing=replacing, base=self._base if replacing else None)
                done.append(server.name)
                if isValid(self):
                    self.saved.emit(server.name)
        except Exception as exc:
            if isValid(self):
                self.pasted = [s for s in self.pasted if s.name not in done]  # "Add all" again: the rest
                self.add_all_button.setText(f"Add all {len(self.pasted)}")
                before = f"Added {', '.join(done)}; " if done else ""
                reason = str(exc) if isinstance(exc, ControlError) else f"{type(exc).__name__}: {exc}"
                self.show_errors([f"{before}not saved: {reason}"])
                self._busy(False)
            if not isinstance(exc, ControlError):
                raise  # unexpected: the error bar shows it with its details too
            return
        if self._stored:  # saving kept the file before as its backup, with the values now in the keyring
            await self.ctx.control.scrub_backup(self._stored)
        if isValid(self):
            self._busy(False)
            self.close()

    def _busy(self, busy: bool) -> None:
        for button in (self.save_button, self.add_all_button, self.read_button):
            button.setEnabled(not busy)

    # The keyring ----------------------------------------------------------------------------------

    def store_in_keyring(self, table: SecretTable, row: int, key: str, value: str) -> asyncio.Task[None] | None:
        """Store `value` as `SERVER/KEY` and put the reference in its row (the form is saved as usual)."""
        server = self.name.text().strip()
        if not SERVER_NAME.match(server) or not key:
            self.show_errors(["Store in keyring: give the server its name and the row its name first"])
            return None
        entry = entry_name(server, key)
        prefix, secret = split_value(value)

        async def store() -> None:
            vault = Vault()
            try:
                await asyncio.to_thread(vault.set, entry, secret)
                self._stored.append(Move(server, table.what, key, entry, prefix, secret))
                summary = await asyncio.to_thread(vault.summary)
            except VaultError as exc:
                raise ControlError(str(exc)) from exc
            if isValid(self) and table.rows_at(row) == (key, value):  # the row is still the one chosen
                table.set_value(row, prefix + reference(entry))
                self.keyring_note.setText(
                    f"{key} is stored in the keyring as {entry}; Save keeps the reference. {summary}"
                )
                self.keyring_note.show()

        return self.ctx.run(store(), f"store {key} in the keyring")

    # Pasting --------------------------------------------------------------------------------------

    def _toggle_paste(self, shown: bool) -> None:
        self.paste_panel.setVisible(shown)
        if shown:
            self.paste_text.setFocus()

    def read_paste(self) -> None:
        """One server fills the form; several wait for "Add all" with a line listing them."""
        self.pasted = []
        self.add_all_button.hide()
        text = self.paste_text.toPlainText()
        nameless = False
        try:
            servers = parse_snippet(text)
        except SnippetError as exc:
            if not exc.needs_name:
                self._paste_says(str(exc), error=True)
                return
            nameless = True
            try:  # a placeholder name: the form keeps the name it has
                servers = parse_snippet(text, name=self.name.text().strip() or "pasted")
            except SnippetError as again:
                self._paste_says(str(again), error=True)
                return
        if len(servers) == 1:
            # Editing a server, a paste replaces its settings, not its name.
            self.load(servers[0], keep_name=nameless or self.original is not None)
            note = (
                "Type its name above, then Save." if nameless and not self.name.text().strip() else "Check, then Save."
            )
            self._paste_says(f"Filled in from the pasted server. {note}")
            self.paste_text.clear()
            return
        self._offer(servers)

    def _offer(self, servers: list[ServerConfig]) -> None:
        taken = set(self.ctx.engine.config.servers)
        bad = [s.name for s in servers if not SERVER_NAME.match(s.name)]
        if bad:
            self._paste_says(
                f"Rename {', '.join(repr(n) for n in bad)} in the pasted text: a name uses letters, digits, "
                "'-', '_' or '.', starting with a letter or digit.",
                error=True,
            )
            return
        self.pasted = [s for s in servers if s.name not in taken]
        existing = [s.name for s in servers if s.name in taken]
        skipped = f" Already configured, left out: {', '.join(existing)}." if existing else ""
        if not self.pasted:
            self._paste_says(f"Nothing new to add.{skipped}", error=True)
            return
        names = ", ".join(s.name for s in self.pasted)
        count = len(self.pasted)
        self._paste_says(f"Add {count} server{'s' if count != 1 else ''}: {names}?{skipped}")
        self.add_all_button.setText(f"Add all {count}")
        self.add_all_button.show()

    def _paste_says(self, text: str, *, error: bool = False) -> None:
        self.paste_message.setText(text)
        self.paste_message.setStyleSheet(_ERROR_STYLE if error else "")

    # Choosing files -------------------------------------------------------------------------------

    def _browse_command(self) -> None:
        dialog = QFileDialog(self, "Choose the server's command")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.command.setText)
        self._dialog = dialog
        dialog.open()  # non-modal: a nested event loop would stall the engine (qasync)


def _masked_arguments(text: str) -> str:
    """The arguments field (one a line) with its secrets masked: the one after `--api-key`, and
    secrets of the rule anywhere (`--token=…`, `KEY=…`, a URL's password)."""
    lines = text.split("\n")
    stripped = [line.strip() for line in lines]
    masked = mask_arguments(stripped, Masker(argument_secrets(stripped)))
    return "\n".join(line if new == old else new for line, old, new in zip(lines, stripped, masked, strict=True))


def copy_name(name: str, taken: Collection[str]) -> str:
    """`<name>-copy`, or `<name>-copy-2`, `-3`… when taken."""
    return free_name(f"{name}-copy", taken)
