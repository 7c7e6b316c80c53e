"""The server editor: a window (non-modal) to add, edit or duplicate one server, or to add several at
once from pasted client JSON. Everything is checked here first, with the reason next to the form;
then `Control.put_server` saves and applies it, and a change it refuses keeps the window open with
its message. Environment values and HTTP headers often hold tokens: they are masked until revealed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from mcpmanager.core.config import SERVER_NAME, HttpServerConfig, HttpTransport, ServerConfig, StdioServerConfig
from mcpmanager.core.control import ControlError
from mcpmanager.core.snippet import SnippetError, parse_snippet
from mcpmanager.gui.context import GuiContext

MASK = "•" * 8  # a fixed length: the mask must not tell how long a token is
VALUE_ROLE = Qt.ItemDataRole.UserRole  # the real value; the display role holds the mask
KINDS = [("stdio", "Local command (stdio)"), ("http", "Streamable HTTP"), ("sse", "SSE (legacy HTTP)")]
_ENV_NAME = re.compile(r"^[^=\s]+$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)
_ERROR_STYLE = "color: #cf222e;"
_INVALID_STYLE = "border: 1px solid #cf222e;"


class _SecretDelegate(QStyledItemDelegate):
    """Edits a value column whose display role is a mask: the editor reads and writes VALUE_ROLE and
    types as a password field while the table is masked."""

    def __init__(self, table: SecretTable) -> None:
        super().__init__(table)
        self.table = table

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QWidget:
        editor = QLineEdit(parent)
        if not self.table.revealed():
            editor.setEchoMode(QLineEdit.EchoMode.Password)
        return editor

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QLineEdit)
        editor.setText(str(index.data(VALUE_ROLE) or ""))

    def setModelData(
        self, editor: QWidget, model: QAbstractItemModel, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        assert isinstance(editor, QLineEdit)
        model.setData(index, editor.text(), VALUE_ROLE)
        model.setData(index, self.table.shown(editor.text()), Qt.ItemDataRole.DisplayRole)


class SecretTable(QWidget):
    """Name/value rows (environment variables, HTTP headers), values masked until "Reveal values"."""

    def __init__(self, what: str, name_title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what  # "env" or "headers": names this table in messages
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels([name_title, "Value"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(0, 200)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setItemDelegateForColumn(1, _SecretDelegate(self))
        self.table.setMinimumHeight(110)
        self.reveal = QCheckBox("Reveal values")
        self.reveal.toggled.connect(self._refresh)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self._add_clicked)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self._remove_clicked)
        buttons = QHBoxLayout()
        for widget in (self.add_button, self.remove_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        buttons.addWidget(self.reveal)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def revealed(self) -> bool:
        return self.reveal.isChecked()

    def shown(self, value: str) -> str:
        return value if self.revealed() or not value else MASK

    def set_rows(self, rows: dict[str, str]) -> None:
        self.table.setRowCount(0)
        for name, value in rows.items():
            self.add_row(name, value)

    def add_row(self, name: str = "", value: str = "") -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        item = QTableWidgetItem(self.shown(value))
        item.setData(VALUE_ROLE, value)
        self.table.setItem(row, 1, item)
        return row

    def set_value(self, row: int, value: str) -> None:
        item = self._item(row, 1)
        item.setData(VALUE_ROLE, value)
        item.setText(self.shown(value))

    def displayed(self, row: int) -> str:
        """What the table shows in the value cell of `row`."""
        return self._item(row, 1).text()

    def _item(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        if item is None:  # every row gets both items in add_row
            item = QTableWidgetItem()
            self.table.setItem(row, column, item)
        return item

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) of every row that is not wholly empty, names stripped."""
        found = []
        for row in range(self.table.rowCount()):
            name_item, value_item = self.table.item(row, 0), self.table.item(row, 1)
            name = name_item.text().strip() if name_item else ""
            value = str(value_item.data(VALUE_ROLE) or "") if value_item else ""
            if name or value:
                found.append((name, value))
        return found

    def check(self, valid_name: re.Pattern[str], rule: str) -> tuple[dict[str, str], list[str]]:
        """The rows as a mapping, and what is wrong with them (never naming a value)."""
        values: dict[str, str] = {}
        errors: list[str] = []
        for number, (name, value) in enumerate(self.rows(), 1):
            if not name:
                errors.append(f"{self.what}: row {number} has a value but no name")
            elif not valid_name.match(name):
                errors.append(f"{self.what}: {name!r}: {rule}")
            elif name in values:
                errors.append(f"{self.what}: {name!r} is there twice; keep one")
            else:
                values[name] = value
        return values, errors

    def _refresh(self) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 1)
            if item is not None:
                item.setText(self.shown(str(item.data(VALUE_ROLE) or "")))

    def _add_clicked(self) -> None:
        row = self.add_row()
        self.table.setCurrentCell(row, 0)
        self.table.editItem(self._item(row, 0))

    def _remove_clicked(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows or ([self.table.currentRow()] if self.table.currentRow() >= 0 else []):
            self.table.removeRow(row)


class ServerEditor(QWidget):
    """Add (`server=None`) or edit one server in its own window. Emits `saved(name)` for each server
    saved, then closes (and is deleted)."""

    saved = Signal(str)

    def __init__(self, ctx: GuiContext, server: ServerConfig | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # the opener forgets it on `destroyed`
        self.ctx = ctx
        self.original = server.name if server is not None else None
        self.pasted: list[ServerConfig] = []  # several servers read from a paste, waiting for "Add all"
        self._loaded_args: tuple[str, list[str]] = ("", [])
        self._dialog: QFileDialog | None = None
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
        self.env = SecretTable("env", "Variable")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("(optional) the folder the command runs in")

        self.url = QLineEdit()
        self.url.setPlaceholderText("https://example.com/mcp")
        self.headers = SecretTable("headers", "Header")

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
        self.form.addRow("Arguments", self.args)
        self.form.addRow("Environment", self.env)
        self.form.addRow("Working folder", self.cwd)
        self.form.addRow("URL", self.url)
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
            self.args.setPlainText(text)
            self.env.set_rows(server.env)
            self.cwd.setText(server.cwd or "")
        else:
            self.kind.setCurrentIndex(1 if server.transport == "http" else 2)
            self.url.setText(server.url)
            self.headers.set_rows(server.headers)
        self.disabled.setChecked(server.disabled)
        self.start_timeout.setValue(server.start_timeout or 0)

    def kind_key(self) -> str:
        return str(self.kind.currentData())

    def _kind_changed(self) -> None:
        stdio = self.kind_key() == "stdio"
        for widget in (self.command_row, self.args, self.env, self.cwd):
            self.form.setRowVisible(widget, stdio)
        for widget in (self.url, self.headers):
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
            url = self.url.text().strip()
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
        text = self.args.toPlainText()
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
                await self.ctx.control.put_server(server, replacing=replacing)
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
        if isValid(self):
            self._busy(False)
            self.close()

    def _busy(self, busy: bool) -> None:
        for button in (self.save_button, self.add_all_button, self.read_button):
            button.setEnabled(not busy)

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


def copy_name(name: str, taken: Collection[str]) -> str:
    """`<name>-copy`, or `<name>-copy-2`, `-3`… when taken."""
    candidate, number = f"{name}-copy", 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-copy-{number}"
    return candidate
