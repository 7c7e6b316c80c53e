"""Render the application icon's PNG sizes from mcpmanager/gui/icons/mcpmanager.svg (run after editing it).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render-icons.py

Writes resources/icons/png/mcpmanager-<size>.png, the sizes freedesktop icon themes and the
window manager use (the install script puts them into ~/.local/share/icons/hicolor).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "mcpmanager" / "gui" / "icons" / "mcpmanager.svg"  # package data: the window draws it
PNG = ROOT / "resources" / "icons" / "png"  # for the desktop install only
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    app = QGuiApplication(sys.argv)  # noqa: F841 (painting needs one)
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print("render-icons: mcpmanager.svg does not load", file=sys.stderr)
        return 1
    PNG.mkdir(exist_ok=True)
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = PNG / f"mcpmanager-{size}.png"
        if not image.save(str(path)):
            print(f"render-icons: cannot write {path}", file=sys.stderr)
            return 1
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
