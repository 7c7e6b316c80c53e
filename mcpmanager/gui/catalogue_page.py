"""STAND-IN, replaced by the real page in this change (built in parallel)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from mcpmanager.gui.context import GuiContext


class CataloguePage(QWidget):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        QVBoxLayout(self).addWidget(QLabel("CataloguePage"))
