"""The selected prompt, resource or resource template on the Catalogue page: what it is (the name
or URI clients use, its server, title, MIME type, a prompt's arguments, description), the request
a client sends for it (with Copy), and what its server listed, as it listed it.

Nothing here changes anything: tool settings (always on, aliases, disabling) are for tools only.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from mcpmanager.gui.catalogue_detail import heading, plain_label, scrolling
from mcpmanager.gui.catalogue_offers import PROMPT, RESOURCE, Offer, arguments

_KIND_TEXT = {PROMPT: "Prompt", RESOURCE: "Resource"}  # anything else is a template


def request(offer: Offer) -> tuple[str, dict[str, Any]]:
    """The method and params a client sends for `offer`, with placeholders for what it must fill in."""
    if offer.kind == PROMPT:
        params: dict[str, Any] = {"name": offer.shown}
        declared = arguments(offer.spec)
        if declared:
            params["arguments"] = {a.name: f"<{a.name}>" for a in declared}
        return "prompts/get", params
    return "resources/read", {"uri": offer.shown}  # a template's variables are for the client to fill in


def _facts(offer: Offer) -> dict[str, str]:
    """The form's rows for `offer`; a row with nothing to say is left out."""
    facts = {"Server": offer.server}
    if offer.kind == PROMPT:
        facts["Original name"] = offer.name
    else:
        facts["Name"] = offer.name
        facts["URI" if offer.kind == RESOURCE else "URI template"] = offer.shown
    facts["Title"] = offer.title
    facts["MIME type"] = offer.mime_type
    size = offer.spec.get("size")
    facts["Size"] = f"{size:,} bytes" if isinstance(size, int) and not isinstance(size, bool) else ""
    facts["Also listed by"] = ", ".join(offer.also)
    if offer.kind == PROMPT:
        lines = [
            f"{a.name}{' (required)' if a.required else ''}{f' — {a.description}' if a.description else ''}"
            for a in arguments(offer.spec)
        ]
        facts["Arguments"] = "\n".join(lines) or "none"
    return facts


FACTS = (
    "Server",
    "Original name",
    "Name",
    "URI",
    "URI template",
    "Title",
    "MIME type",
    "Size",
    "Also listed by",
    "Arguments",
)


class OfferDetail(QWidget):
    """One prompt, resource or template: facts on the left, the request and the listing on the right."""

    def __init__(self) -> None:
        super().__init__()
        self.offer: Offer | None = None
        self.title = plain_label(selectable=True)
        title_font = QFont(self.title.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.25)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.kind = plain_label()
        self.description = plain_label(selectable=True)
        self.description.setWordWrap(True)
        self.facts: dict[str, QLabel] = {name: plain_label(selectable=True) for name in FACTS}
        self._form = QFormLayout()
        self._form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for name, value in self.facts.items():
            value.setWordWrap(True)
            self._form.addRow(name, value)
        about = QVBoxLayout()
        about.addWidget(self.title)
        about.addWidget(self.kind)
        about.addWidget(self.description)
        about.addLayout(self._form)
        about.addStretch(1)

        self.request_heading = heading("")
        self.copy = QPushButton("Copy")
        self.copy.setToolTip("Copy the request")
        self.copy.clicked.connect(self.copy_request)
        self.request = plain_label(selectable=True, mono=True)
        self.listed = plain_label(selectable=True, mono=True)
        request_head = QHBoxLayout()
        request_head.addWidget(self.request_heading, 1)
        request_head.addWidget(self.copy)
        how = QVBoxLayout()
        how.addWidget(self.request)
        how.addWidget(heading("As the server listed it"))
        how.addWidget(self.listed)
        how.addStretch(1)

        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(scrolling(about))
        body.addWidget(scrolling(how, head=request_head))
        body.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(body)

    def show_offer(self, offer: Offer) -> None:
        self.offer = offer
        self.title.setText(offer.shown)
        self.kind.setText(f"{_KIND_TEXT.get(offer.kind, 'Resource template')} of {offer.server}")
        self.description.setText(offer.description or "(no description)")
        facts = _facts(offer)
        for name, value in self.facts.items():
            text = facts.get(name, "")
            value.setText(text)
            self._form.setRowVisible(value, bool(text))
        method, params = request(offer)
        self.request_heading.setText(f"Request ({method})")
        self.request.setText(json.dumps(params, indent=2, ensure_ascii=False))
        self.listed.setText(json.dumps(offer.spec, indent=2, ensure_ascii=False))

    def copy_request(self) -> None:
        QGuiApplication.clipboard().setText(self.request.text())
        self.copy.setText("Copied")
        QTimer.singleShot(1500, self, lambda: self.copy.setText("Copy"))
