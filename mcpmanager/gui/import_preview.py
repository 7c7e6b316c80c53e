"""The preview of importing a client's servers (the Clients page's Import…): which servers would be
added or skipped, and a checkbox to move their secrets into the OS keyring instead of mcpmanager's
config (`core/clients/importing.py`, `secrets_to_keyring`). The preview names each value that would
move, never the value. Non-modal (`open()`, never `exec()`: a nested loop would stall the engine)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from mcpmanager.core.clients.importing import ImportPlan, planned_moves


class ImportPreview(QDialog):
    def __init__(self, plan: ImportPlan, keyring: str, parent: QWidget | None = None) -> None:
        """`keyring`: which keyring the secrets would go to (`Vault.summary`, read off the UI thread)."""
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle(f"Import from {plan.label}")
        self.resize(640, 320)
        lines = [f"<b>Import from {plan.label}</b> (servers added: +, already in mcpmanager: =)"]
        for added in plan.added:
            renamed = f" (as {added.name}: its name is taken)" if added.name != added.server.name else ""
            lines.append(f"+ {added.server.name}{renamed}")
        lines += [f"= {skipped.server.name}: {skipped.reason}" for skipped in plan.skipped]
        if not plan.added:
            lines.append("Nothing new to add.")
        self.summary = QLabel("<br>".join(_escape(line) if i else line for i, line in enumerate(lines)))
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        moves = planned_moves(plan)
        count = f"{len(moves)} value{'s' if len(moves) != 1 else ''}"
        self.to_keyring = QCheckBox(f"Move their secrets into the keyring ({count}); the config keeps references")
        self.to_keyring.setEnabled(bool(moves))
        shown = [move.describe() for move in moves] + [keyring]  # masked: names, never values
        self.moves = QLabel("\n".join(shown))
        self.moves.setWordWrap(True)
        self.moves.setContentsMargins(22, 0, 0, 0)  # under the checkbox's text
        self.moves.setVisible(bool(moves))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Import")
        ok.setEnabled(bool(plan.added))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addStretch(1)
        layout.addWidget(self.to_keyring)
        layout.addWidget(self.moves)
        layout.addWidget(self.buttons)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
