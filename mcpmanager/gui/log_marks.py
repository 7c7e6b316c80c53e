"""How the stderr pane marks a line: mcpmanager's own lines, the skipped-lines marker, and the MCP log
messages a server sends, by level.

The supervisor writes each `notifications/message` into the server's stderr log as lines
`[log <level>] <logger>: <text>` (core/supervisor/downstream.py `_on_log`). Warnings and worse colour
the whole line, so they catch the eye in a screenful of chatter (critical, alert and emergency also
invert their tag); info and notice colour only their tag; debug is greyed. The pane asks only for
the lines on screen (`LogView`), so this is a prefix test and a dict lookup per visible line, never
a pass over a flood.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from PySide6.QtGui import QColor, QTextCharFormat

from mcpmanager.core.supervisor.stderr_log import MESSAGE_PREFIX

OWN_PREFIX = "[mcpmanager]"  # lines the supervisor writes itself (StderrLog.note)
SKIPPED_MARK = "… "  # the pane's own "N lines skipped here"
LOG_PREFIX = MESSAGE_PREFIX

# Mid tones that read on light and dark backgrounds alike (the states' palette, style.COLOURS).
_OWN = "#8250df"
_DEBUG = "#8c959f"
_INFO = "#0969da"
_WARNING = "#bc4c00"
_ERROR = "#cf222e"
_LINE, _TAG = "line", "tag"
# Level → what is coloured (the whole line or its tag only) and in which colour. Colours only: an
# extra selection cannot change a font's weight in a plain-text view (it is drawn without relayout).
_LEVELS = {
    "debug": (_LINE, _DEBUG),
    "info": (_TAG, _INFO),
    "notice": (_TAG, _INFO),
    "warning": (_LINE, _WARNING),
    "error": (_LINE, _ERROR),
    "critical": (_LINE, _ERROR),
    "alert": (_LINE, _ERROR),
    "emergency": (_LINE, _ERROR),
}
_GRAVE = frozenset({"critical", "alert", "emergency"})  # the tag inverted as well: white on red


@dataclass(frozen=True)
class Mark:
    start: int  # position in the line
    end: int  # -1: to the end of the line
    format: QTextCharFormat


def marks(line: str, start: int) -> tuple[Mark, ...]:
    """How to mark `line`, whose own text (after the pane's time stamp) begins at `start`."""
    if line.startswith(OWN_PREFIX, start) or line.startswith(SKIPPED_MARK, start):
        return (Mark(0, -1, _format(_OWN, False)),)
    if not line.startswith(LOG_PREFIX, start):
        return ()
    end = line.find("]", start + len(LOG_PREFIX))
    level = line[start + len(LOG_PREFIX) : end] if end >= 0 else ""
    how = _LEVELS.get(level)
    if how is None:
        return ()  # not a level MCP defines: a server's own text that happens to look like a tag
    part, colour = how
    if part == _TAG:
        return (Mark(start, end + 1, _format(colour, False)),)
    line_mark = Mark(0, -1, _format(colour, False))
    return (line_mark, Mark(start, end + 1, _format(colour, True))) if level in _GRAVE else (line_mark,)


@cache
def _format(colour: str, inverted: bool) -> QTextCharFormat:
    made = QTextCharFormat()
    if inverted:
        made.setForeground(QColor("#ffffff"))
        made.setBackground(QColor(colour))
    else:
        made.setForeground(QColor(colour))
    return made
