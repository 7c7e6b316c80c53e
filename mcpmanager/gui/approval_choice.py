"""A tool's approval on the Catalogue page: by the default rule (which says what it comes to for this
tool, and why), or Allow, Ask first, Deny of its own (`tools."server:tool".approval`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox

from mcpmanager.core.catalogue.catalogue import ToolEntry
from mcpmanager.core.config.settings import ProxySettings
from mcpmanager.core.proxy.approval_rule import rule_for

_WORDS = {"allow": "allow", "ask": "ask first", "deny": "deny"}
ApprovalValue = Literal["default", "allow", "ask", "deny"]  # "default": none of its own
CHOICES: tuple[ApprovalValue, ...] = ("default", "allow", "ask", "deny")


class ApprovalChoice(QComboBox):
    chosen = Signal(str)  # "default", "allow", "ask" or "deny": the user picked it

    def __init__(self, proxy: Callable[[], ProxySettings] = ProxySettings) -> None:
        super().__init__()
        self._proxy = proxy
        for value in CHOICES:
            self.addItem(value, value)
        self.setItemText(1, "Allow: call without asking")
        self.setItemText(2, "Ask first")
        self.setItemText(3, "Deny: refuse every call")
        self.setToolTip("Whether calls of this tool are forwarded, asked for first (in this window), or refused")
        self.activated.connect(lambda index: self.chosen.emit(self.itemData(index)))

    def show_tool(self, entry: ToolEntry) -> None:
        rule = rule_for(entry.name, entry.spec, None, self._proxy())
        self.setItemText(0, f"By default: {_WORDS[rule.policy]} ({rule.why})")
        self.setCurrentIndex(CHOICES.index(entry.settings.approval or "default"))

    def value(self) -> ApprovalValue:
        return cast(ApprovalValue, self.currentData())
