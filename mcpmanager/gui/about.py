"""Help → About: the version, where this user's config, logs and runtime files are, and the licence."""

from __future__ import annotations

import contextlib
import platform
import sys
from importlib import metadata
from pathlib import Path

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from mcpmanager import __version__
from mcpmanager.core.system.paths import Paths
from mcpmanager.gui import style

# An installed wheel has the licence in its metadata (dist-info/licenses, where setuptools puts LICENSE);
# a checkout has it beside the package, the frozen app at the bundle's root (packaging/mcpmanager.spec).
LICENSE_FILE = Path(__file__).resolve().parent.parent.parent / "LICENSE"
LICENSE_NAME = "MIT"


def licence_text() -> str:
    with contextlib.suppress(metadata.PackageNotFoundError):
        # None where the metadata found is a checkout's egg-info, which holds no licence
        if text := metadata.distribution("mcpmanager").read_text("licenses/LICENSE"):
            return text
    try:
        return LICENSE_FILE.read_text(encoding="utf-8")
    except OSError:
        return f"{LICENSE_NAME} licence (the LICENSE file is missing from this installation)"


def build_facts() -> str:
    frozen = "app build" if getattr(sys, "frozen", False) else "from source"
    return (
        f"{frozen} · Python {platform.python_version()} · Qt {qVersion()} · PySide6 {PySide6.__version__} · "
        f"{platform.system()} {platform.machine()}"
    )


class AboutDialog(QDialog):
    def __init__(self, paths: Paths, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About mcpmanager")
        self.resize(640, 520)
        icon = QLabel()
        icon.setPixmap(style.app_pixmap(64))
        self.title = QLabel(f"<h2>mcpmanager {__version__}</h2>")
        self.summary = QLabel(
            "A desktop manager and discovery proxy for MCP servers: it runs your servers, shows how "
            "they are, and serves all their tools to your clients as one."
        )
        self.summary.setWordWrap(True)
        self.facts = QLabel(build_facts())
        rows = [
            ("Config file", paths.config_file),
            ("Logs", paths.log_dir),
            ("Cache", paths.cache_dir),
            ("Runtime (endpoint, token)", paths.runtime_dir),
        ]
        self.places = QLabel(
            "<table cellspacing='4'>"
            + "".join(f"<tr><td><b>{name}</b></td><td>{_escape(str(path))}</td></tr>" for name, path in rows)
            + "</table>"
        )
        self.places.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.licence = QPlainTextEdit(licence_text())
        self.licence.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(icon)
        layout.addWidget(self.title)
        layout.addWidget(self.summary)
        layout.addWidget(self.facts)
        layout.addWidget(self.places)
        layout.addWidget(QLabel(f"<b>Licence</b> ({LICENSE_NAME})"))
        layout.addWidget(self.licence, 1)
        layout.addWidget(buttons)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
