"""How states look: one colour per state and the light drawn for it, the app icon, the log font."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from mcpmanager.core.supervisor.lifecycle import State

# Package data (beside this module in a checkout, an installed wheel and the frozen app), read as
# bytes: Qt needs no file path, and a missing icon is an error at start, not a blank window icon.
ICON = resources.files("mcpmanager.gui") / "icons" / "mcpmanager.svg"

# Green ready; amber on its way up (a start, or a retry after a crash); red crashed (waiting to retry)
# or failed (a crash loop, a missing command); blue when it waits for the user to sign in; grey when
# nothing runs on purpose.
COLOURS = {
    State.READY: "#2da44e",
    State.STARTING: "#d4a017",
    State.BACKOFF: "#cf222e",
    State.FAILED: "#cf222e",
    State.STOPPED: "#8c959f",
    State.DISABLED: "#8c959f",
    State.NEEDS_SIGN_IN: "#0969da",
}
# Which state speaks for a set of servers (the tray): the worst one.
SEVERITY = {
    State.NEEDS_SIGN_IN: 6,  # only the user can fix it: the tray says so first
    State.FAILED: 5,
    State.BACKOFF: 4,
    State.STARTING: 3,
    State.READY: 2,
    State.STOPPED: 1,
    State.DISABLED: 0,
}


def colour(state: State) -> QColor:
    return QColor(COLOURS[state])


def worst(states: Sequence[State]) -> State | None:
    return max(states, key=lambda s: SEVERITY[s]) if states else None


@cache
def light(state: State, size: int = 12) -> QIcon:
    """A round status light."""
    pixmap = QPixmap(size * 2, size * 2)  # drawn at twice the size: crisp on high-DPI screens
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    fill = colour(state)
    painter.setPen(fill.darker(130))
    painter.setBrush(fill)
    painter.drawEllipse(QRectF(2, 2, size * 2 - 4, size * 2 - 4))
    painter.end()
    pixmap.setDevicePixelRatio(2.0)
    return QIcon(pixmap)


@cache
def _icon_svg() -> bytes:
    return ICON.read_bytes()


@cache
def app_pixmap(size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(_icon_svg()))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return pixmap


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        icon.addPixmap(app_pixmap(size))
    return icon


@cache
def tray_icon(state: State | None) -> QIcon:
    """The app icon with a light in the corner coloured by the worst server state."""
    icon = QIcon()
    for size in (16, 22, 24, 32, 48, 64):
        pixmap = QPixmap(app_pixmap(size))
        if state is not None:
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            dot = size * 0.45
            painter.setPen(QColor("#ffffff"))
            painter.setBrush(colour(state))
            painter.drawEllipse(QRectF(size - dot - 0.5, size - dot - 0.5, dot, dot))
            painter.end()
        icon.addPixmap(pixmap)
    return icon


def monospace() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font
