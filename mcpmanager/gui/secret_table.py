"""Fields that may hold secrets, masked until the user reveals them by the core's one rule
(`core/config/secrets.py`): a table of names and values (environment, HTTP headers) whose secret rows
are masked and harmless ones (PATH, LANG) shown, edited in place and checked row by row; and a text
field (arguments, URL) shown with its secrets masked, read-only until revealed.

A row whose value refers to the keyring (`${keyring:NAME}`, `Bearer ${keyring:NAME}`) holds no
secret: it is shown as it is, and read-only (typing a token over it would put one back in the file).
Given a `store` callback, the table offers "Store in keyring" for the secret row selected."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
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

from mcpmanager.core.config.secrets import entry_is_secret
from mcpmanager.core.vault.references import referenced_names

MASK = "•" * 8  # a fixed length: the mask must not tell how long a token is


VALUE_ROLE = Qt.ItemDataRole.UserRole  # the real value; the display role holds the mask


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
        if not self.table.revealed() and self.table.is_secret(index.row()):
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
        self.table.refresh_row(index.row())


class SecretTable(QWidget):
    """Name/value rows (environment variables, HTTP headers): the values of secret rows (a secret's
    name, or a secret's shape) are masked until "Reveal values"; harmless rows are shown."""

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
        self.table.itemChanged.connect(self._item_changed)  # a renamed row may become (or stop being) secret
        self.reveal = QCheckBox("Reveal values")
        self.reveal.toggled.connect(self._refresh)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self._add_clicked)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self._remove_clicked)
        self.store_button = QPushButton("Store in keyring")
        self.store_button.setToolTip("Keep the selected secret in the OS keyring; the config keeps a reference to it")
        self.store_button.clicked.connect(self._store_clicked)
        self.store_button.hide()  # shown once the owner says how to store (`offer_keyring`)
        self._store: Callable[[SecretTable, int, str, str], object] | None = None
        self.table.currentCellChanged.connect(lambda *_: self._update_store())
        buttons = QHBoxLayout()
        for widget in (self.add_button, self.remove_button, self.store_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        buttons.addWidget(self.reveal)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def revealed(self) -> bool:
        return self.reveal.isChecked()

    def is_secret(self, row: int) -> bool:
        """A secret's value in plain text (a reference to the keyring is none)."""
        name, value = self.table.item(row, 0), self.table.item(row, 1)
        text = str(value.data(VALUE_ROLE) or "") if value else ""
        return not is_reference(text) and entry_is_secret(name.text().strip() if name else "", text)

    def is_reference(self, row: int) -> bool:
        value = self.table.item(row, 1)
        return value is not None and is_reference(str(value.data(VALUE_ROLE) or ""))

    def offer_keyring(self, store: Callable[[SecretTable, int, str, str], object]) -> None:
        """Show "Store in keyring"; `store(table, row, name, value)` stores the selected secret row's value."""
        self._store = store
        self.store_button.show()
        self._update_store()

    def _update_store(self) -> None:
        row = self.table.currentRow()
        self.store_button.setEnabled(row >= 0 and self.is_secret(row))

    def _store_clicked(self) -> None:
        row = self.table.currentRow()
        if self._store is not None and row >= 0 and self.is_secret(row):
            name, value = self.rows_at(row)
            self._store(self, row, name, value)

    def rows_at(self, row: int) -> tuple[str, str]:
        name, value = self.table.item(row, 0), self.table.item(row, 1)
        return (name.text().strip() if name else "", str(value.data(VALUE_ROLE) or "") if value else "")

    def refresh_row(self, row: int) -> None:
        """Show `row`'s value, or the mask while it is secret and not revealed."""
        item = self.table.item(row, 1)
        if item is None:
            return
        value = str(item.data(VALUE_ROLE) or "")
        shown = MASK if value and not self.revealed() and self.is_secret(row) else value
        if item.text() != shown:
            item.setText(shown)
        reference = is_reference(value)
        editable = Qt.ItemFlag.ItemIsEditable
        item.setFlags(item.flags() & ~editable if reference else item.flags() | editable)
        font = QFont(item.font())
        font.setItalic(reference)
        item.setFont(font)
        names = ", ".join(referenced_names(value))
        item.setToolTip(
            f"Kept in the keyring as {names}; `mcpmanager secrets set {names}` changes it" if reference else ""
        )
        if row == self.table.currentRow():
            self._update_store()

    def set_rows(self, rows: dict[str, str]) -> None:
        self.table.setRowCount(0)
        for name, value in rows.items():
            self.add_row(name, value)

    def add_row(self, name: str = "", value: str = "") -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        item = QTableWidgetItem()
        item.setData(VALUE_ROLE, value)
        self.table.setItem(row, 1, item)
        self.refresh_row(row)
        return row

    def set_value(self, row: int, value: str) -> None:
        self._item(row, 1).setData(VALUE_ROLE, value)
        self.refresh_row(row)

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
            self.refresh_row(row)

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 0:
            self.refresh_row(item.row())

    def _add_clicked(self) -> None:
        row = self.add_row()
        self.table.setCurrentCell(row, 0)
        self.table.editItem(self._item(row, 0))

    def _remove_clicked(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows or ([self.table.currentRow()] if self.table.currentRow() >= 0 else []):
            self.table.removeRow(row)


class MaskedText(QWidget):
    """A text field (`QLineEdit` or `QPlainTextEdit`) shown with its secrets masked by `mask` until
    "Reveal". Masked, it is read-only: text typed over a mask could not be told from the secret."""

    def __init__(self, field: QLineEdit | QPlainTextEdit, mask: Callable[[str], str], what: str) -> None:
        super().__init__()
        self.field = field
        self._mask = mask
        self._hidden: str | None = None  # the real text while the field shows it masked
        self.reveal = QCheckBox(f"Reveal {what}")
        self.reveal.hide()  # shown only when there is something to reveal
        self.reveal.toggled.connect(lambda: self.set_text(self.text()))
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.reveal)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(field)
        layout.addLayout(row)

    def text(self) -> str:
        """The real text, masked or not."""
        if self._hidden is not None:
            return self._hidden
        field = self.field
        return field.text() if isinstance(field, QLineEdit) else field.toPlainText()

    def masked(self) -> bool:
        return self._hidden is not None

    def set_text(self, text: str) -> None:
        shown = self._mask(text)
        secret = shown != text
        self.reveal.setVisible(secret)
        hide = secret and not self.reveal.isChecked()
        self._hidden = text if hide else None
        self.field.setReadOnly(hide)
        self.field.setToolTip('Holds a secret: check "Reveal" to see or edit it' if hide else "")
        if isinstance(self.field, QLineEdit):
            self.field.setText(shown if hide else text)
        else:
            self.field.setPlainText(shown if hide else text)


def is_reference(value: str) -> bool:
    """A value that refers to the keyring (`${keyring:NAME}`, maybe after `Bearer `)."""
    return bool(referenced_names(value))
