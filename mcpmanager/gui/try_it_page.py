"""The Try it page: what a model would get, without being a model.

Search runs the engine's own `discover_tools` (the same index, ranking and call templates a model
gets) and shows the ranked hits and the exact text a model reads. Resolve runs the proxy's own plan
for a tool name and arguments: the tool and how it was found, the renamed arguments and what would
be forwarded, or the error text the model would read. Both only read; nothing is sent to a server.
Both follow the catalogue: an alias made elsewhere shows at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from PySide6.QtCore import QAbstractTableModel, QItemSelection, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.resolve.messages import miss_text
from mcpmanager.core.resolve.resolver import CallPlan
from mcpmanager.gui import style
from mcpmanager.gui.context import GuiContext

DEBOUNCE_MS = 150  # run once typing pauses this long, not on every keystroke
DEFAULT_LIMIT = 5  # discover_tools' own default
MAX_LIMIT = 25  # discover_tools' own cap
Index = QModelIndex | QPersistentModelIndex


# Pure helpers: what the page shows, as text --------------------------------------------------------------


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, problem): blank is no arguments; bad JSON says where, as a user would look for it."""
    if not text.strip():
        return None, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object {{…}}, not {type(value).__name__}"
    return value, None


@dataclass(frozen=True)
class PlanText:
    headline: str
    resolved: str  # `create_issue [gh]`, or "—"
    how: str
    renamed: str  # `repository→repo, issue_title→title`
    candidates: str  # an ambiguity's tools, or the closest one withheld
    suggestions: str
    outcome_caption: str
    outcome: str  # the forwarded arguments (JSON), or the error text a model reads


def describe(plan: CallPlan, checked: bool) -> PlanText:
    """The plan in words; `checked` says whether arguments were given (and so looked at)."""
    resolution, tool = plan.resolution, plan.tool
    renames = plan.checked.renames if plan.checked is not None else ()
    candidates = ", ".join(f"{t.exposed} [{t.server}]" for t in resolution.ambiguous)
    if resolution.withheld is not None:
        candidates = (
            f"{resolution.withheld.exposed} [{resolution.withheld.server}] (withheld: {resolution.withheld_why})"
        )
    error = plan.error
    if tool is not None and error is None:
        headline = f"Would call {tool.exposed} on {tool.server} ({resolution.how})"
        if checked:
            caption, outcome = "Arguments forwarded", json.dumps(plan.arguments, ensure_ascii=False, indent=2)
        else:
            headline += "; give arguments to check them too"
            caption, outcome = "Arguments forwarded", "(no arguments given: only the name was resolved)"
    else:
        if tool is not None:
            headline = f"Refused: the arguments for {tool.exposed} need fixing; nothing would be sent"
        elif resolution.ambiguous:
            headline = f"Ambiguous: {len(resolution.ambiguous)} tools answer this name; none is called"
        elif resolution.withheld is not None:
            headline = f"Not resolved: the closest tool, {resolution.withheld.exposed}, is withheld"
        else:
            headline = "Unknown tool"
        caption, outcome = "What the model reads (isError)", error or miss_text(resolution)
    return PlanText(
        headline=headline,
        resolved=f"{tool.exposed} [{tool.server}]" if tool is not None else "—",
        how=resolution.how or "—",
        renamed=", ".join(f"{r.passed}→{r.declared}" for r in renames) or "—",
        candidates=candidates or "—",
        suggestions=", ".join(resolution.suggestions) or "—",
        outcome_caption=caption,
        outcome=outcome,
    )


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


# The search hits ---------------------------------------------------------------------------------------

RANK, NAME, SERVER, SCORE, DESCRIPTION = range(5)
HIT_HEADERS = ("#", "Name", "Server", "Score", "Description")


class HitsModel(QAbstractTableModel):
    """discover_tools' hits as it returned them (`structured_content["tools"]`), in its order."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hits: list[dict[str, Any]] = []

    def set_hits(self, hits: list[dict[str, Any]]) -> None:
        self.beginResetModel()  # every search replaces the whole list
        self.hits = list(hits)
        self.endResetModel()

    def names(self) -> list[str]:
        return [str(hit.get("name")) for hit in self.hits]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's name and default)
        return 0 if parent.isValid() else len(self.hits)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HIT_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(HIT_HEADERS)
        ):
            return HIT_HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.hits):
            return None
        hit, column = self.hits[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if column == RANK:
                return str(index.row() + 1)
            if column == SCORE:
                score = hit.get("score")
                return f"{score:.3f}" if isinstance(score, int | float) else ""
            key = {NAME: "name", SERVER: "server", DESCRIPTION: "description"}[column]
            return str(hit.get(key, ""))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _monospace_view(height: int | None = None) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setFont(style.monospace())
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    if height is not None:
        view.setMaximumHeight(height)
    return view


def _debounced(parent: QObject, slot: Any) -> QTimer:
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(DEBOUNCE_MS)
    timer.timeout.connect(slot)
    return timer


class TryItPage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.shown_for: tuple[str, str] | None = None  # (name, arguments) the resolve part shows
        self._search_timer = _debounced(self, self.search)
        self._resolve_timer = _debounced(self, self.resolve)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self._search_part())
        splitter.addWidget(self._resolve_part())
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        note = QLabel("Nothing on this page calls a server: it shows what mcpmanager would do.")
        note.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(note)
        ctx.signals.catalogueChanged.connect(self._catalogue_changed)

    def search_field(self) -> QLineEdit:
        """Where the window's Ctrl+F goes on this page: the query."""
        return self.query

    # Search ---------------------------------------------------------------------------------------

    def _search_part(self) -> QGroupBox:
        self.query = QLineEdit()
        self.query.setPlaceholderText("A task in plain words, as a model would ask discover_tools")
        self.query.setClearButtonEnabled(True)
        self.query.textChanged.connect(lambda _text: self._search_timer.start())
        self.limit = QSpinBox()
        self.limit.setRange(1, MAX_LIMIT)
        self.limit.setValue(DEFAULT_LIMIT)
        self.limit.valueChanged.connect(lambda _value: self._search_timer.start())
        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.hide()
        self.hits = HitsModel(self)
        self.results = QTableView()
        self.results.setModel(self.hits)
        self.results.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.verticalHeader().hide()
        self.results.verticalHeader().setDefaultSectionSize(self.results.fontMetrics().height() + 6)
        header = self.results.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in ((RANK, 32), (NAME, 170), (SERVER, 90), (SCORE, 60)):
            header.resizeSection(column, width)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.results.selectionModel().selectionChanged.connect(self._hit_selected)
        self.model_text = _monospace_view()
        self.model_text.setPlaceholderText("discover_tools' answer, exactly as a model reads it")
        self.template = _monospace_view(110)
        self.template.setPlaceholderText("The selected tool's call template")
        self.optional = QLabel()
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the call template")
        self.copy_button.clicked.connect(self.copy_template)
        self.copy_button.setEnabled(False)

        row = QHBoxLayout()
        row.addWidget(QLabel("Query"))
        row.addWidget(self.query, 1)
        row.addWidget(QLabel("Limit"))
        row.addWidget(self.limit)
        reads = QWidget()
        reads_layout = QVBoxLayout(reads)
        reads_layout.setContentsMargins(0, 0, 0, 0)
        reads_layout.addWidget(QLabel("What the model reads"))
        reads_layout.addWidget(self.model_text, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.results)
        split.addWidget(reads)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        template_row = QHBoxLayout()
        template_column = QVBoxLayout()
        template_column.addWidget(self.template)
        template_column.addWidget(self.optional)
        template_row.addLayout(template_column, 1)
        template_row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        box = QGroupBox("Search the tools as discover_tools does")
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addWidget(self.empty)
        layout.addWidget(split, 1)
        layout.addWidget(QLabel("Call template (call_tool arguments)"))
        layout.addLayout(template_row)
        return box

    def search(self) -> None:
        """Run discover_tools on the query now (typing runs it after a pause)."""
        self._search_timer.stop()
        query = self.query.text()
        if not query.strip():
            self.hits.set_hits([])
            self.model_text.clear()
            self.empty.hide()
            self._show_template(None)
            return
        result = self.ctx.engine.router.discovery.discover({"query": query, "limit": self.limit.value()})
        structured = result.structured_content if isinstance(result.structured_content, dict) else {}
        tools = structured.get("tools")
        hits = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        text = text_of(result)
        self.hits.set_hits(hits)
        self.model_text.setPlainText(text)
        self.empty.setText(text.splitlines()[0] if text else "")
        self.empty.setVisible(not hits)
        if hits:
            self.results.selectRow(0)  # the best hit's template at once
        else:
            self._show_template(None)

    def copy_template(self) -> None:
        QGuiApplication.clipboard().setText(self.template.toPlainText())

    def _hit_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.results.selectionModel().selectedRows()
        self._show_template(self.hits.hits[rows[0].row()] if rows else None)

    def _show_template(self, hit: dict[str, Any] | None) -> None:
        if hit is None:
            self.template.clear()
            self.optional.clear()
            self.copy_button.setEnabled(False)
            return
        self.template.setPlainText(json.dumps(hit.get("call"), ensure_ascii=False, indent=2))
        optional = hit.get("optional") or []
        self.optional.setText(f"optional: {', '.join(map(str, optional))}" if optional else "")
        self.copy_button.setEnabled(True)

    # Resolve --------------------------------------------------------------------------------------

    def _resolve_part(self) -> QGroupBox:
        self.name = QLineEdit()
        self.name.setPlaceholderText("A tool name as a model might call it: createIssue, gh/create_isue, …")
        self.name.setClearButtonEnabled(True)
        self.name.textChanged.connect(lambda _text: self._resolve_timer.start())
        self.via = QComboBox()
        self.via.addItem("through call_tool", "call_tool")
        self.via.addItem("called directly", "direct")
        self.via.setCurrentIndex(0 if self.ctx.engine.router.mode == "discovery" else 1)
        self.via.currentIndexChanged.connect(lambda _index: self._resolve_timer.start())
        self.arguments = QPlainTextEdit()
        self.arguments.setFont(style.monospace())
        self.arguments.setPlaceholderText('Arguments, a JSON object (optional): {"owner": "o", "repository": "r"}')
        self.arguments.textChanged.connect(self._resolve_timer.start)
        self.arguments_problem = QLabel()
        self.arguments_problem.setStyleSheet("color: #cf222e;")
        self.arguments_problem.setWordWrap(True)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setBold(True)
        self.headline.setFont(font)
        self.resolved = QLabel("—")
        self.how = QLabel("—")
        self.renamed = QLabel("—")
        self.candidates = QLabel("—")
        self.suggestions = QLabel("—")
        for label in (self.resolved, self.how, self.renamed, self.candidates, self.suggestions):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome_caption = QLabel("")
        self.outcome = _monospace_view()

        row = QHBoxLayout()
        row.addWidget(QLabel("Tool name"))
        row.addWidget(self.name, 1)
        row.addWidget(self.via)
        left = QVBoxLayout()
        left.addWidget(QLabel("Arguments"))
        left.addWidget(self.arguments, 1)
        left.addWidget(self.arguments_problem)
        form = QFormLayout()
        form.addRow(self.headline)
        form.addRow("Resolved to", self.resolved)
        form.addRow("How", self.how)
        form.addRow("Renamed", self.renamed)
        form.addRow("Candidates", self.candidates)
        form.addRow("Suggestions", self.suggestions)
        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(self.outcome_caption)
        right.addWidget(self.outcome, 1)
        body = QHBoxLayout()
        body.addLayout(left, 2)
        body.addLayout(right, 3)
        box = QGroupBox("Resolve a tool name as serving would")
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addLayout(body, 1)
        return box

    def resolve(self) -> CallPlan | None:
        """Plan the call now (typing plans it after a pause); never sends anything."""
        self._resolve_timer.stop()
        self.shown_for = (self.name.text(), self.arguments.toPlainText())
        name = self.name.text().strip()
        arguments, problem = parse_arguments(self.arguments.toPlainText())
        self.arguments_problem.setText(f"Invalid arguments: {problem}" if problem else "")
        if not name or problem is not None:
            self._show_plan(None)
            return None
        via_call_tool = self.via.currentData() == "call_tool"
        plan = self.ctx.engine.router.resolver.plan(name, arguments, via_call_tool, check=arguments is not None)
        self._show_plan(describe(plan, checked=arguments is not None))
        return plan

    def _show_plan(self, shown: PlanText | None) -> None:
        if shown is None:
            shown = PlanText("", "—", "—", "—", "—", "—", "", "")
        self.headline.setText(shown.headline)
        self.resolved.setText(shown.resolved)
        self.how.setText(shown.how)
        self.renamed.setText(shown.renamed)
        self.candidates.setText(shown.candidates)
        self.suggestions.setText(shown.suggestions)
        self.outcome_caption.setText(shown.outcome_caption)
        self.outcome.setPlainText(shown.outcome)

    # Following the catalogue -----------------------------------------------------------------------

    def _catalogue_changed(self) -> None:
        if self.query.text().strip():
            self._search_timer.start()
        if self.name.text().strip():
            self._resolve_timer.start()
