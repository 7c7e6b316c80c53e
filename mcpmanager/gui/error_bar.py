"""A bar over the pages that shows the latest problem (an uncaught error, a change that could not be
made, a config file that no longer loads) until dismissed; the details are one click away."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QPushButton

from mcpmanager.gui.errors import ErrorFunnel, Problem


class ErrorBar(QFrame):
    def __init__(self, funnel: ErrorFunnel) -> None:
        super().__init__()
        self.setObjectName("errorBar")
        self.setStyleSheet("#errorBar { background: #ffebe9; border-bottom: 1px solid #ff8182; }")
        self.funnel = funnel
        self.problem: Problem | None = None
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.count = QLabel()
        self.details = QPushButton("Details…")
        self.details.clicked.connect(self._show_details)
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.details)
        layout.addWidget(self.dismiss)
        funnel.reported.connect(self.show_problem)
        self.hide()
        if funnel.problems:  # reported before this bar existed (at start, before the window): shown now
            self.show_problem(funnel.problems[-1])

    def show_problem(self, problem: Problem) -> None:
        self.problem = problem
        self.message.setText(problem.title)
        total = len(self.funnel.problems)
        self.count.setText(f"({total} so far)" if total > 1 else "")
        self.details.setVisible(bool(problem.detail))
        self.show()

    def _show_details(self) -> None:
        if self.problem is None:
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "mcpmanager: details", self.problem.title, parent=self)
        box.setDetailedText(self.problem.detail)
        box.open()  # non-modal: a nested loop would break the engine's event loop (qasync)
