"""Calls waiting for the user's approval, as a panel over the pages: never a modal dialog (the engine
runs on this loop, and a dialog would take the focus from whatever the user is typing into).

While the window exists it is the one asked (`Approvals.use_window`): each asked call gets a card
with the tool, its server, the client asking, why it is asked, its arguments (masked by the secrets
rule before they reach the window) and the time left, and three answers: Allow once, Always (the
tool's `approval` becomes "allow" in the config, through `Control`), Deny. Several asks stack, the
oldest first. `asked` tells the app a new one came, so it can flash the taskbar entry or show a
tray message when the window is hidden; nothing here raises the window.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout

from mcpmanager.core.proxy.approval import Answer, PendingAsk
from mcpmanager.gui import style
from mcpmanager.gui.context import GuiContext

SHOWN = 3  # cards at once; the others wait their turn, counted


class AskCard(QFrame):
    """One call waiting: what it is, and the three answers."""

    def __init__(self, ask: PendingAsk, answer: Callable[[PendingAsk, Answer], None]) -> None:
        super().__init__()
        self.ask = ask
        self.setObjectName("askCard")
        self.setStyleSheet("#askCard { background: #ffffff; border: 1px solid #d4a72c; border-radius: 6px; }")
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = QFont(self.title.font())
        font.setBold(True)
        self.title.setFont(font)
        self.title.setText(f"Allow {ask.client} to call {ask.tool} on {ask.server}?")
        self.about = QLabel()
        self.about.setTextFormat(Qt.TextFormat.PlainText)
        self.about.setWordWrap(True)
        self.arguments = QPlainTextEdit(ask.arguments_text())
        self.arguments.setReadOnly(True)
        self.arguments.setFont(style.monospace())
        self.arguments.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # never takes the focus on its own
        lines = min(6, ask.arguments_text().count("\n") + 1)
        self.arguments.setFixedHeight(self.arguments.fontMetrics().lineSpacing() * lines + 12)
        self.allow_once = QPushButton("Allow once")
        self.always = QPushButton("Always allow")
        self.always.setToolTip(f'Allow every call of {ask.tool} from now on (tools."{ask.key}".approval = "allow")')
        self.deny = QPushButton("Deny")
        for button, choice in ((self.allow_once, "once"), (self.always, "always"), (self.deny, "deny")):
            button.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Enter in another field must not answer
            button.clicked.connect(lambda _=False, c=choice: answer(self.ask, c))
        buttons = QHBoxLayout()
        buttons.addWidget(self.about, 1)
        buttons.addWidget(self.allow_once)
        buttons.addWidget(self.always)
        buttons.addWidget(self.deny)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.arguments)
        layout.addLayout(buttons)
        self.tick()

    def tick(self) -> None:
        left = max(0, round(self.ask.deadline - time.time()))
        self.about.setText(f"Asked because {self.ask.why}. Refused in {left // 60}:{left % 60:02d} unless answered.")


class ApprovalPanel(QFrame):
    asked = Signal(object)  # PendingAsk: a new call waits (the app flashes the window or the tray)

    def __init__(self, ctx: GuiContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.setObjectName("approvalPanel")
        self.setStyleSheet("#approvalPanel { background: #fff8c5; border-bottom: 1px solid #d4a72c; }")
        self.cards: list[AskCard] = []
        self.waiting: list[PendingAsk] = []  # beyond the cards shown
        self.more = QLabel()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(10, 8, 10, 8)
        self._layout.addWidget(self.more)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        approvals = ctx.engine.router.approvals
        self._leave = [
            approvals.use_window(),
            approvals.asked.connect(self._asked),
            approvals.settled.connect(self._settled),
        ]
        for ask in approvals.pending():
            self._asked(ask)
        self._update()

    def close_panel(self) -> None:
        """The window goes away: clients are asked instead from now on."""
        for leave in self._leave:
            leave()
        self._leave = []
        self._clock.stop()

    def pending(self) -> list[PendingAsk]:
        return [card.ask for card in self.cards] + self.waiting

    def card(self, ask_id: int) -> AskCard | None:
        return next((card for card in self.cards if card.ask.id == ask_id), None)

    def _asked(self, ask: PendingAsk) -> None:
        if len(self.cards) < SHOWN:
            self._add_card(ask)
        else:
            self.waiting.append(ask)
        self._update()
        self.asked.emit(ask)

    def _settled(self, ask: PendingAsk) -> None:
        self.waiting = [w for w in self.waiting if w.id != ask.id]
        card = self.card(ask.id)
        if card is not None:
            self.cards.remove(card)
            card.hide()
            card.deleteLater()
            if self.waiting:
                self._add_card(self.waiting.pop(0))
        self._update()

    def _add_card(self, ask: PendingAsk) -> None:
        card = AskCard(ask, self.answer)
        self.cards.append(card)
        self._layout.insertWidget(self._layout.count() - 1, card)

    def answer(self, ask: PendingAsk, answer: Answer) -> None:
        """The user's answer (the card goes once the engine has it)."""
        if not self.ctx.engine.router.approvals.answer(ask.id, answer):
            return  # too late: timed out or given up on
        if answer == "always":
            doing = f"always allow {ask.tool} of {ask.server}"
            self.ctx.run(self.ctx.control.set_tool(ask.key, approval="allow"), doing)

    def _tick(self) -> None:
        for card in self.cards:
            card.tick()

    def _update(self) -> None:
        self.more.setText(f"{len(self.waiting)} more call(s) waiting behind these." if self.waiting else "")
        self.more.setVisible(bool(self.waiting))
        self.setVisible(bool(self.cards))
        if self.cards and not self._clock.isActive():
            self._clock.start()
        elif not self.cards:
            self._clock.stop()
