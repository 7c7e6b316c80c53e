"""Tools held for review (changed since approved, or new under `proxy.newTools` "hold"): what the
banner, the review and the tray show them from.

`HeldWatch` follows the engine's held tools (`Engine.held_tools`) through the engine signals: a
server listing its tools (status), an approval (the catalogue), a config applied (servers). It
tells its listeners only when the held set itself changed.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from mcpmanager.core.catalogue.pins import Held
from mcpmanager.gui.context import GuiContext


class HeldWatch(QObject):
    changed = Signal()

    def __init__(self, ctx: GuiContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.held: list[Held] = []
        for signal in (ctx.signals.statusChanged, ctx.signals.catalogueChanged, ctx.signals.serversChanged):
            signal.connect(self.refresh)
        self.refresh()

    def refresh(self, *_: object) -> None:
        held = self.ctx.engine.held_tools()
        if [(h.key, h.fingerprint) for h in held] != [(h.key, h.fingerprint) for h in self.held]:
            self.held = held
            self.changed.emit()


def _tools(n: int) -> str:
    return f"{n} tool{'s' if n != 1 else ''}"


def held_count_text(held: list[Held]) -> str:
    """The tray's count, in its tooltip and menu ("2 tools held for review"); "" when none is held."""
    return f"{_tools(len(held))} held for review" if held else ""


def tray_tooltip(ready: int, servers: int, held: list[Held]) -> str:
    tip = f"mcpmanager: {ready}/{servers} servers ready"
    return f"{tip}\n{held_count_text(held)}" if held else tip


def banner_text(held: list[Held]) -> str:
    """What the banner says: how many changed, how many are new, and that clients do not see them."""
    changed = sum(1 for h in held if not h.new)
    new = len(held) - changed
    them = "it" if len(held) == 1 else "them"
    parts = []
    if changed:
        parts.append(f"{_tools(changed)} changed since you approved {'it' if changed == 1 else 'them'}")
    if new:
        parts.append(f"{new} new tool{'s' if new != 1 else ''} appeared on a server you approved")
    return f"<b>{' and '.join(parts)}.</b> Clients do not see {them} until you review and approve {them}."
