"""Tools, prompts and resource templates held for review (changed since approved, or new under
`proxy.newTools` "hold"): what the banner, the review and the tray show them from.

`HeldWatch` follows what the engine holds (`Engine.held_tools`, every kind) and its damaged state files
(`Engine.damaged_files`: a pins file that cannot be read) through the engine signals: a server
listing its tools (status), an approval or the pins file read again (the catalogue), a config
applied (servers). It tells its listeners only when one of them changed.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QObject, Signal

from mcpmanager.core.catalogue.pins import Held
from mcpmanager.gui.context import GuiContext


class HeldWatch(QObject):
    changed = Signal()

    def __init__(self, ctx: GuiContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.held: list[Held] = []
        self.damaged: list[dict[str, str]] = []
        for signal in (ctx.signals.statusChanged, ctx.signals.catalogueChanged, ctx.signals.serversChanged):
            signal.connect(self.refresh)
        self.refresh()

    def refresh(self, *_: object) -> None:
        held = self.ctx.engine.held_tools()
        damaged = self.ctx.engine.damaged_files()
        if [(h.key, h.fingerprint) for h in held] != [(h.key, h.fingerprint) for h in self.held] or (
            damaged != self.damaged
        ):
            self.held, self.damaged = held, damaged
            self.changed.emit()


NOUNS = {
    "tool": ("tool", "tools"),
    "prompt": ("prompt", "prompts"),
    "template": ("resource template", "resource templates"),
}


def _count(held: list[Held], adjective: str = "") -> str:
    """ "2 tools", "1 tool and 1 prompt", "1 new prompt": each kind counted apart."""
    counts = [(n, NOUNS[kind]) for kind in NOUNS if (n := sum(1 for h in held if h.kind == kind))]
    said = [f"{n} {adjective}{one if n == 1 else many}" for n, (one, many) in counts]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


def held_count_text(held: list[Held]) -> str:
    """The tray's count, in its tooltip and menu ("2 tools held for review"); "" when none is held."""
    return f"{_count(held)} held for review" if held else ""


def tray_tooltip(ready: int, servers: int, held: list[Held]) -> str:
    tip = f"mcpmanager: {ready}/{servers} servers ready"
    return f"{tip}\n{held_count_text(held)}" if held else tip


def damaged_text(damaged: list[dict[str, str]]) -> str:
    """What the banner says of a pins file that cannot be read: never hidden behind what it held."""
    return " ".join(
        f"<b>The pins file {html.escape(d['file'])} is damaged</b> ({html.escape(d['reason'])}): tools that "
        "differ from those served last, and prompts and templates not seen since the engine started, are held, "
        "and nothing can be approved until you repair it or run <code>mcpmanager pins reset</code> (which "
        "keeps it aside)."
        for d in damaged
    )


def banner_text(held: list[Held], damaged: list[dict[str, str]] | None = None) -> str:
    """What the banner says: a damaged pins file first, then how many changed, how many are new, and
    that clients do not see them."""
    said = damaged_text(damaged or [])
    if not held:
        return said
    changes, news = [h for h in held if not h.new], [h for h in held if h.new]
    changed, new = len(changes), len(news)
    them = "it" if len(held) == 1 else "them"
    parts = []
    if changed:
        parts.append(f"{_count(changes)} changed since you approved {'it' if changed == 1 else 'them'}")
    if new and damaged:  # nothing to tell new from lost: the pins file cannot be read
        parts.append(f"{_count(news)} not served before {'is' if new == 1 else 'are'} held")
    elif new:
        parts.append(f"{_count(news, 'new ')} appeared on a server you approved")
    text = f"<b>{' and '.join(parts)}.</b> Clients do not see {them} until you review and approve {them}."
    return f"{said}<br>{text}" if said else text
