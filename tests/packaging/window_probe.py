"""Run by the Python of an installed mcpmanager, not by pytest (tests/packaging/test_wheel.py): the
window as plain `mcpmanager` builds it, offscreen on the bundled demo. Prints one JSON object: where
the package was imported from, the demo servers' states, how many pixels of the window's icon and
of the About dialog's icon are drawn (none when the icon did not load), and the licence's first line."""

from __future__ import annotations

import asyncio
import json
import sys

import qasync
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QApplication, QLabel

import mcpmanager
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from mcpmanager.gui.about import AboutDialog
from mcpmanager.gui.app import Manager
from mcpmanager.gui.errors import ErrorFunnel

WAIT = 60.0  # seconds for the window and both demo servers (a fresh install's first start)


def drawn(pixmap: QPixmap) -> int:
    image = pixmap.toImage()
    return sum(1 for y in range(image.height()) for x in range(image.width()) if image.pixelColor(x, y).alpha())


async def look(manager: Manager) -> dict[str, object]:
    running = spawn(manager.run(), name="window")
    started = spawn(manager.started.wait(), name="window started")
    try:
        await asyncio.wait({running, started}, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
        if running.done():
            running.result()  # raises what stopped the window
        assert started.done(), f"the window did not start within {WAIT} s"
        assert manager.window is not None and manager.ctx is not None
        servers = manager.ctx.engine.downstreams
        deadline = asyncio.get_running_loop().time() + WAIT
        while any(d.status.state is not State.READY for d in servers.values()):
            assert asyncio.get_running_loop().time() < deadline, {n: d.status.state for n, d in servers.items()}
            await asyncio.sleep(0.1)  # polled, as a test of another process polls its advertisement
        about = AboutDialog(manager.paths, manager.window)
        [about_icon] = [label.pixmap() for label in about.findChildren(QLabel) if not label.pixmap().isNull()]
        return {
            "package": mcpmanager.__file__,
            "servers": {name: d.status.state.value for name, d in servers.items()},
            "window_icon": drawn(manager.window.windowIcon().pixmap(64, 64)),
            "about_icon": drawn(about_icon),
            "licence": about.licence.toPlainText().splitlines()[0],
            "icon_area": 64 * 64,
        }
    finally:
        started.cancel()
        manager.quit.set()
        await asyncio.gather(running, return_exceptions=True)


def main() -> None:
    app = QApplication(sys.argv)
    paths = Paths.resolve()
    paths.ensure()
    funnel = ErrorFunnel()
    funnel.install()
    try:
        print(json.dumps(qasync.run(look(Manager(paths, funnel)))))
    finally:
        funnel.uninstall()
        del app


if __name__ == "__main__":
    main()
