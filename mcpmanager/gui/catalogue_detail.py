"""The selected tool's detail on the Catalogue page: what it is (names, server, size, annotations,
description), how to call it (the `call_tool` template, with Copy), its input schema, and the two
things a user edits here: aliases and parameter aliases, applied through the model to `Control`.

An edit in progress is never overwritten by the engine's updates: a field follows the engine only
while it still shows what the engine has. The labels and panes built here (`plain_label`,
`scrolling`, `heading`) are also those of a prompt's or resource's detail (`catalogue_offer_detail`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.catalogue.call_templates import call_template, optional_parameters
from mcpmanager.core.catalogue.catalogue import ToolEntry
from mcpmanager.core.config.settings import ProxySettings
from mcpmanager.gui import style
from mcpmanager.gui.approval_choice import ApprovalChoice
from mcpmanager.gui.catalogue_model import CatalogueModel

_HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open world",
}


def parse_aliases(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def annotations_text(spec: dict[str, Any]) -> str:
    """`read-only · idempotent · title "Get page"`; the hints a server left out are not guessed."""
    annotations = spec.get("annotations")
    if not isinstance(annotations, dict) or not annotations:
        return "none"
    parts = []
    for key, value in annotations.items():
        if key in _HINTS and isinstance(value, bool):
            parts.append(_HINTS[key] if value else f"not {_HINTS[key]}")
        else:
            parts.append(f"{key} {json.dumps(value, ensure_ascii=False)}")
    return " · ".join(parts)


def declared_parameters(spec: dict[str, Any]) -> list[str] | None:
    """The input schema's property names; None when the schema does not declare them."""
    schema = spec.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return list(properties) if isinstance(properties, dict) else None


class AliasField(QLineEdit):
    """Comma-separated aliases; Esc puts back what is saved."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[str] = []
        self.setPlaceholderText("other names, comma-separated")

    def dirty(self) -> bool:
        return parse_aliases(self.text()) != self.saved

    def show_saved(self, aliases: list[str], *, force: bool) -> None:
        keep = self.dirty() and not force
        self.saved = list(aliases)
        if not keep:
            self.setText(", ".join(aliases))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self.dirty():
            self.setText(", ".join(self.saved))
            event.accept()
            return
        super().keyPressEvent(event)


@dataclass(frozen=True)
class _ParamRow:
    alias: QLineEdit
    arrow: QLabel
    target: QComboBox
    remove: QToolButton

    def drop(self) -> None:
        for widget in (self.alias, self.arrow, self.target, self.remove):
            widget.hide()
            widget.deleteLater()


class ParamAliases(QWidget):
    """Rows of "name a model passes" → "declared parameter" (a combo of the tool's parameters)."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[str, str] = {}
        self._declared: list[str] | None = None
        self._rows: list[_ParamRow] = []
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setColumnStretch(0, 1)
        self._grid.setColumnStretch(2, 1)
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Add a name a model may pass for one of this tool's parameters")
        self.add_button.clicked.connect(lambda: self.add_row("", ""))
        self.apply_button = QPushButton("Apply")
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._grid)
        layout.addLayout(buttons)
        self._update()

    def rows(self) -> list[tuple[str, str]]:
        return [(row.alias.text().strip(), row.target.currentText().strip()) for row in self._rows]

    def value(self) -> dict[str, str]:
        return {alias: target for alias, target in self.rows() if alias}

    def dirty(self) -> bool:
        return self.rows() != list(self.saved.items())

    def show_saved(self, params: dict[str, str], declared: list[str] | None, *, force: bool) -> None:
        keep = self.dirty() and not force
        self.saved = dict(params)
        if keep:
            self._update()
            return
        self._declared = declared
        for row in self._rows:
            row.drop()
        self._rows = []
        for alias, target in params.items():
            self.add_row(alias, target)
        self._update()

    def add_row(self, alias: str, target: str) -> None:
        name = QLineEdit(alias)
        name.setPlaceholderText("name a model passes")
        choice = QComboBox()
        choice.setEditable(self._declared is None)  # no declared parameters to choose from: type one
        choice.addItems(self._declared or [])
        if target and choice.findText(target) < 0:
            choice.addItem(target)  # saved before the server changed its schema: show it as it is
        choice.setCurrentIndex(choice.findText(target) if target else (0 if choice.count() else -1))
        remove = QToolButton()
        remove.setText("✕")
        remove.setToolTip("Remove this parameter alias (Apply to save)")
        entry = _ParamRow(name, QLabel("→"), choice, remove)
        line = self._grid.rowCount()  # a fresh grid line: removed rows leave theirs empty
        for column, widget in enumerate((name, entry.arrow, choice, remove)):
            self._grid.addWidget(widget, line, column)
        self._rows.append(entry)
        name.textChanged.connect(self._update)
        name.returnPressed.connect(self.apply_button.click)  # Enter applies, as in the aliases field
        choice.currentTextChanged.connect(self._update)
        remove.clicked.connect(lambda: self._remove(entry))
        self._update()

    def set_row(self, row: int, alias: str, target: str) -> None:
        """Fill in a row as a user would."""
        entry = self._rows[row]
        entry.alias.setText(alias)
        entry.target.setCurrentText(target)

    def _remove(self, entry: _ParamRow) -> None:
        self._rows.remove(entry)
        entry.drop()
        self._update()

    def _update(self) -> None:
        self.apply_button.setEnabled(self.dirty())


class ToolDetail(QWidget):
    """One row of the model, under the table: what the tool is and its aliases on the left, how to
    call it and its schema on the right. `show_row(None)` shows the hint to pick one."""

    def __init__(
        self,
        model: CatalogueModel,
        proxy: Callable[[], ProxySettings] = ProxySettings,
        learned: Callable[[str], str] = lambda _key: "",
    ) -> None:
        """`learned`: what was learned from use about a tool (by key), in a line (`learned_view`)."""
        super().__init__()
        self.model = model
        self._learned = learned
        self.approval = ApprovalChoice(proxy)  # asking before its calls (core/proxy/approval.py)
        self.approval.chosen.connect(self.apply_approval)
        self.key: str | None = None

        self.hint = QLabel(
            "Select a tool to see its schema and call template, and to give it aliases; "
            "a prompt to see its arguments; a resource to see its URI."
        )
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setEnabled(False)  # drawn greyed: a hint, not content
        self.title = plain_label(selectable=True)
        title_font = QFont(self.title.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.25)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.state = plain_label()
        self.server, self.original, self.cost, self.annotations = (plain_label(selectable=True) for _ in range(4))
        self.annotations.setWordWrap(True)
        self.learned = plain_label(selectable=True)
        self.learned.setWordWrap(True)
        self.description = plain_label(selectable=True)
        self.description.setWordWrap(True)

        self.aliases = AliasField()
        self.aliases.returnPressed.connect(self.apply_aliases)
        self.aliases.textChanged.connect(self._update_buttons)
        self.aliases_apply = QPushButton("Apply")
        self.aliases_apply.clicked.connect(self.apply_aliases)
        self.params = ParamAliases()
        self.params.apply_button.clicked.connect(self.apply_params)

        self.template = plain_label(selectable=True, mono=True)
        self.optional = plain_label()
        self.optional.setWordWrap(True)
        self.copy = QPushButton("Copy")
        self.copy.setToolTip("Copy the call template")
        self.copy.clicked.connect(self.copy_template)
        self.schema = plain_label(selectable=True, mono=True)

        facts = QFormLayout()
        facts.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        facts.addRow("Server", self.server)
        facts.addRow("Original name", self.original)
        facts.addRow("Size", self.cost)
        facts.addRow("Annotations", self.annotations)
        facts.addRow("Approval", self.approval)
        facts.addRow("Learned from use", self.learned)
        alias_row = QHBoxLayout()
        alias_row.addWidget(self.aliases, 1)
        alias_row.addWidget(self.aliases_apply)
        facts.addRow("Aliases", alias_row)
        facts.addRow("Parameter aliases", self.params)
        about = QVBoxLayout()
        about.addWidget(self.title)
        about.addWidget(self.state)
        about.addWidget(self.description)
        about.addLayout(facts)
        about.addStretch(1)

        template_head = QHBoxLayout()
        template_head.addWidget(heading("Call template (call_tool)"), 1)
        template_head.addWidget(self.copy)
        call = QVBoxLayout()
        call.addWidget(self.template)
        call.addWidget(self.optional)
        call.addWidget(heading("Input schema"))
        call.addWidget(self.schema)
        call.addStretch(1)

        self.body = QSplitter(Qt.Orientation.Horizontal)
        self.body.addWidget(scrolling(about))
        self.body.addWidget(scrolling(call, head=template_head))
        self.body.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.hint)
        layout.addWidget(self.body)
        self.show_row(None)

    def show_row(self, row: int | None) -> None:
        entry = self.model.entry(row) if row is not None else None
        self.hint.setVisible(entry is None)
        self.body.setVisible(entry is not None)
        if entry is None or row is None:
            self.key = None
            return
        same = entry.key == self.key
        self.key = entry.key
        self.title.setText(self.model.shown_name(row))
        self.state.setText(_state_text(entry))
        self.state.setVisible(bool(self.state.text()))
        self.server.setText(entry.server)
        self.original.setText(entry.name)
        self.cost.setText(f"about {self.model.tokens(row):,} tokens in a client's tools/list")
        self.annotations.setText(annotations_text(entry.spec))
        self.learned.setText(self._learned(entry.key) or "nothing yet")
        self.description.setText(entry.description or "(no description)")
        schema = entry.spec.get("inputSchema")
        if entry.exposed:
            self.template.setText(json.dumps(call_template(entry.exposed, schema), indent=2, ensure_ascii=False))
            optional = optional_parameters(schema)
            self.optional.setText(f"Optional: {', '.join(optional)}" if optional else "")
        else:
            self.template.setText("(enable the tool to call it)")
            self.optional.setText("")
        self.optional.setVisible(bool(self.optional.text()))
        self.copy.setEnabled(entry.exposed is not None)
        self.schema.setText(json.dumps(schema, indent=2, ensure_ascii=False) if schema is not None else "(none)")
        self.aliases.show_saved(list(entry.settings.aliases), force=not same)
        self.params.show_saved(dict(entry.settings.params), declared_parameters(entry.spec), force=not same)
        self.approval.show_tool(entry)
        self._update_buttons()

    def apply_aliases(self) -> None:
        if self.key is not None and self.aliases.dirty():
            aliases = parse_aliases(self.aliases.text())
            self.model.change_tool(self.key, {"aliases": aliases}, f"set the aliases of {self.title.text()}")

    def apply_params(self) -> None:
        if self.key is not None and self.params.dirty():
            doing = f"set the parameter aliases of {self.title.text()}"
            self.model.change_tool(self.key, {"params": self.params.value()}, doing)

    def apply_approval(self, _chosen: str) -> None:
        if self.key is not None:
            doing = f"set the approval of {self.title.text()}"
            self.model.change_tool(self.key, {"approval": self.approval.value()}, doing)

    def copy_template(self) -> None:
        QGuiApplication.clipboard().setText(self.template.text())
        self.copy.setText("Copied")
        QTimer.singleShot(1500, self, lambda: self.copy.setText("Copy"))

    def _update_buttons(self) -> None:
        self.aliases_apply.setEnabled(self.key is not None and self.aliases.dirty())


def _state_text(entry: ToolEntry) -> str:
    notes = []
    if entry.settings.disabled:
        notes.append("Disabled: not offered to clients")
    elif entry.settings.always_on:
        notes.append("Always on: listed to clients without a search")
    if entry.cached:
        notes.append(f"From the cache: {entry.server} has not listed its tools in this run yet")
    return "\n".join(notes)


def plain_label(*, selectable: bool = False, mono: bool = False) -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
    if mono:
        label.setFont(style.monospace())
    return label


def scrolling(layout: QVBoxLayout, head: QHBoxLayout | None = None) -> QWidget:
    """`layout` in a scroll area, under `head` (a heading and its buttons), which stays in sight: the
    content may be wider than the pane (a schema's long lines) and scroll sideways, its buttons never."""
    inner = QWidget()
    inner.setLayout(layout)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(inner)
    if head is None:
        return area
    margins = layout.contentsMargins()  # the style's, now that the layout is on a widget
    head.setContentsMargins(margins.left(), margins.top(), margins.right(), 0)
    layout.setContentsMargins(margins.left(), 0, margins.right(), margins.bottom())  # one gap under the head
    pane = QWidget()
    column = QVBoxLayout(pane)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(layout.spacing())
    column.addLayout(head)
    column.addWidget(area, 1)
    return pane


def heading(text: str) -> QLabel:
    label = QLabel(text)
    font = QFont(label.font())
    font.setBold(True)
    label.setFont(font)
    return label
