"""A banner over every page while a tool is held for review (changed since approved, or new under
`proxy.newTools` "hold"): how many, that clients do not see them, and Review (the diff, Approve); and
while the pins file is damaged, that it is and what to do (it holds what differs from what was served)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.held_watch import HeldWatch, banner_text
from mcpmanager.gui.pins_review import PinsReview


class HeldBanner(QFrame):
    def __init__(self, ctx: GuiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("heldBanner")
        self.setStyleSheet("#heldBanner { background: #fff8c5; border-bottom: 1px solid #d4a72c; }")
        self.watch = HeldWatch(ctx, self)
        self.dialog: PinsReview | None = None
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.review_button = QPushButton("Review…")
        self.review_button.clicked.connect(self.review)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.review_button)
        self.watch.changed.connect(self._update)
        self._update()

    def _update(self) -> None:
        held, damaged = self.watch.held, self.watch.damaged
        self.setVisible(bool(held or damaged))
        self.review_button.setVisible(bool(held))
        if held or damaged:
            self.message.setText(banner_text(held, damaged))

    def review(self) -> PinsReview:
        """The review, non-modal (never exec() under qasync); one for the window, brought forward."""
        if self.dialog is None:
            self.dialog = PinsReview(self.ctx, self.watch, self.window())
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog
