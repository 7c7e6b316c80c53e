"""STAND-IN, replaced by the real banner in this change (built in parallel)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame

from mcpmanager.gui.context import GuiContext


class FirstRunBanner(QFrame):
    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.hide()
