"""Start the desktop manager: the engine in this process on Qt's event loop (qasync), serving clients
over HTTP on 127.0.0.1 as `serve --http` does, the window, the tray, and one error funnel.

With no config file it runs the bundled demo servers and the window offers to import the user's
servers from their clients. A config that does not load is shown, not fatal: the engine starts
with no servers and applies the file as soon as it loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import logging.handlers
import signal
import sys
import time
from pathlib import Path

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from mcpmanager import __version__
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.secrets import MaskingFormatter
from mcpmanager.core.engine.control import Control
from mcpmanager.core.engine.engine import Engine, Identity
from mcpmanager.core.engine.host import host_http, token_file
from mcpmanager.core.engine.single_instance import control, describe, engine_lock, wait_for_advertisement
from mcpmanager.core.proxy.approval import PendingAsk
from mcpmanager.core.serve.http import PortUnavailable
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.file_lock import FileLock
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from mcpmanager.gui import style
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.engine_signals import EngineSignals
from mcpmanager.gui.errors import ErrorFunnel
from mcpmanager.gui.held_watch import held_count_text, tray_tooltip
from mcpmanager.gui.main_window import MainWindow

logger = logging.getLogger("mcpmanager.gui")
LOG_BYTES = 1 << 20
TAKE_OVER_WAIT = 30.0  # seconds for a background engine to stop its servers (the stop ladder)
ENDPOINT_WAIT = 10.0  # seconds the window waits for its endpoint before showing anyway


def run(config_file: Path | None = None, tray: bool = False) -> int:
    """The `mcpmanager` command with no arguments (`tray`: start in the tray, window closed)."""
    paths = Paths.resolve(config_file=config_file)
    paths.ensure()
    lock = engine_lock(paths.runtime_dir)
    if not lock.acquire() and not _take_over(paths, lock):
        return _already_running(paths)
    try:
        return _run(paths, tray)
    finally:
        lock.release()


def _take_over(paths: Paths, lock: FileLock) -> bool:
    """An engine `connect` started in the background stops for the window, which serves instead
    (its clients reconnect by themselves). Others are the user's, and stay."""
    info = wait_for_advertisement(paths.runtime_dir, 10.0)
    if info is None or info.get("front_end") != "background" or not control(info, "quit"):
        return False
    deadline = time.monotonic() + TAKE_OVER_WAIT
    while time.monotonic() < deadline:
        if lock.acquire():
            return True
        time.sleep(0.05)
    return False


def _already_running(paths: Paths) -> int:
    """One engine per user: bring the running window forward, or say what runs instead."""
    info = wait_for_advertisement(paths.runtime_dir, 10.0)
    if info is not None and info.get("front_end") == "gui" and control(info, "show"):
        print(f"{describe(info)}; its window was brought forward", file=sys.stderr)
        return 0
    print(f"mcpmanager: {describe(info)}; stop it first to open the window", file=sys.stderr)
    return 2


def _run(paths: Paths, tray: bool) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("mcpmanager")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("mcpmanager")  # Wayland matches the window to resources/mcpmanager.desktop by this
    app.setQuitOnLastWindowClosed(False)  # the tray keeps it alive; Quit ends it
    app.setWindowIcon(style.app_icon())
    _log_to_file(paths.log_dir / "mcpmanager.log")
    funnel = ErrorFunnel()
    funnel.install()
    try:
        qasync.run(Manager(paths, funnel, start_in_tray=tray).run())
    finally:
        funnel.uninstall()
    return 0


def _log_to_file(path: Path) -> None:
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=1, encoding="utf-8")
    # Masked as the CLI's stderr is: a traceback may quote a URL with its token (core/config/secrets.py).
    handler.setFormatter(MaskingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)


def load_or_demo(paths: Paths, funnel: ErrorFunnel) -> tuple[Config, bool]:
    """The user's config; the demo when there is none; nothing (and the reason shown) when broken."""
    if not paths.config_file.exists():
        from mcpmanager.demo import demo_config

        return demo_config(paths), True
    try:
        return load_config(paths.config_file), False
    except ConfigError as exc:
        funnel.report(f"{exc} — running with no servers until the file loads; it is applied as soon as it does")
        return Config(), False


class Manager:
    """The running app: engine, endpoint, window and tray, from start to Quit."""

    def __init__(self, paths: Paths, funnel: ErrorFunnel, start_in_tray: bool = False) -> None:
        self.paths = paths
        self.start_in_tray = start_in_tray
        self.funnel = funnel
        self.quit = asyncio.Event()
        self.started = asyncio.Event()  # the window is up and the engine started
        self.tray: QSystemTrayIcon | None = None
        self.window: MainWindow | None = None
        self.ctx: GuiContext | None = None
        self._listening = asyncio.Event()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self.funnel.install(loop)
        self._quit_on_signals(loop)
        config, demo = load_or_demo(self.paths, self.funnel)
        label = "bundled demo servers" if demo else None
        engine = Engine(config, self.paths, identity=Identity("gui", label, token_file(self.paths)))
        signals = EngineSignals(engine)
        ctx = GuiContext(engine, signals, Control(self.paths.config_file, engine), self.funnel, demo=demo)
        window = MainWindow(ctx, has_tray=lambda: self.tray is not None and self.tray.isVisible())
        self.window, self.ctx = window, ctx
        window.quitRequested.connect(self.quit.set)
        self._make_tray(ctx, window)
        # The endpoint first: starting uvicorn costs ~0.35 s of imports and setup on this loop, better
        # spent before the window shows than as a frozen window (bench_gui_startup).
        self._listening = asyncio.Event()
        tasks = [spawn(self._serve(ctx), name="serve http")]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), ENDPOINT_WAIT)
        await engine.start()
        tasks.append(spawn(engine.watch_config(), name="watch config"))
        window.status.refresh()
        if not (self.start_in_tray and self.tray is not None):
            window.show()  # in the tray only when there is a tray to come back from
        # What start-up built lives as long as the app: out of the collector's way, a full collection
        # during a stderr flood costs ~1 ms instead of 60-250 ms of frozen window (bench_gui_stderr).
        gc.collect()
        gc.freeze()
        self.started.set()
        try:
            await self.quit.wait()
        finally:
            window.hide()
            if self.tray is not None:
                self.tray.hide()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            signals.close()
            await engine.stop()  # every server's process group, by the stop ladder

    def _quit_on_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        """SIGTERM and Ctrl-C quit as the Quit action does: every server stopped by the ladder (their
        grandchildren too), not left behind. Python runs signal handlers only between bytecodes, and
        Qt's loop runs C++: a light timer lets it look in."""
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, lambda *_: loop.call_soon_threadsafe(self.quit.set))
        self._signal_poll = QTimer()
        self._signal_poll.timeout.connect(lambda: None)
        self._signal_poll.start(250)

    async def _serve(self, ctx: GuiContext) -> None:
        def listening(url: str) -> None:
            ctx.signals.serversChanged.emit()  # the status bar shows the endpoint
            self._listening.set()

        try:
            await host_http(ctx.engine, controls={"show": self._shown_for_another}, on_listening=listening)
        except* PortUnavailable as group:
            self.funnel.report(f"Clients cannot connect: {group.exceptions[0]}")
        finally:
            self._listening.set()  # never keep the window waiting for an endpoint that failed

    def _shown_for_another(self) -> None:
        logger.info("another mcpmanager was started: this window comes forward instead")
        self.bring_forward()

    def bring_forward(self) -> None:
        """Another `mcpmanager` was started: show this window instead of a second engine."""
        if self.window is not None:
            self.window.showNormal()
            self.window.raise_()
            self.window.activateWindow()

    def _make_tray(self, ctx: GuiContext, window: MainWindow) -> None:
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return  # closing the window then quits: there would be no way back to it
        tray = QSystemTrayIcon(style.tray_icon(None))
        menu = QMenu()

        def activated(reason: QSystemTrayIcon.ActivationReason) -> None:
            if reason == QSystemTrayIcon.ActivationReason.Trigger:
                self.bring_forward()

        menu.addAction("Show mcpmanager", self.bring_forward)

        def review_held() -> None:
            self.bring_forward()
            window.held.review()

        review = menu.addAction("Review what is held…", review_held)  # shown while something is held
        review.setVisible(False)
        menu.addSeparator()
        menu.addAction("Quit (stop every server)", self.quit.set)
        tray.setContextMenu(menu)
        tray.activated.connect(activated)

        def recolour(*_: object) -> None:
            states = [d.status.state for d in ctx.engine.downstreams.values() if d.status.state is not State.DISABLED]
            worst = style.worst(states)
            tray.setIcon(style.tray_icon(worst))
            ready = sum(1 for s in states if s is State.READY)
            held = window.held.watch.held
            tray.setToolTip(tray_tooltip(ready, len(states), held))
            review.setText(f"Review {held_count_text(held)}…")
            review.setVisible(bool(held))

        ctx.signals.statusChanged.connect(recolour)
        ctx.signals.serversChanged.connect(recolour)
        window.held.watch.changed.connect(recolour)

        def approval_asked(ask: PendingAsk) -> None:
            if not window.isActiveWindow():  # the panel is not in sight: say so, without raising the window
                title = "mcpmanager: a call waits for your approval"
                text = f"{ask.client} wants to call {ask.tool} on {ask.server}."
                tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Warning, 15000)

        window.approvals.asked.connect(approval_asked)
        tray.messageClicked.connect(self.bring_forward)
        tray.show()
        self.tray = tray
