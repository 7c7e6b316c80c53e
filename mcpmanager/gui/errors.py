"""One funnel for every error: uncaught exceptions (main thread, other threads, asyncio tasks and
callbacks, qasync slots), Qt's own warnings, and changes the user asked for that could not be made.
Each is logged, and the window shows it (the error bar) instead of it vanishing into a terminal."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from PySide6.QtCore import QMessageLogContext, QObject, QtMsgType, Signal, qInstallMessageHandler

logger = logging.getLogger("mcpmanager.gui")
MAX_KEPT = 200


@dataclass(frozen=True)
class Problem:
    title: str  # one line: what went wrong
    detail: str = ""  # a traceback or the longer story


class ErrorFunnel(QObject):
    reported = Signal(object)  # Problem

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.problems: list[Problem] = []
        self._previous: dict[str, Any] = {}

    def report(self, title: str, detail: str = "") -> None:
        """Keep, log and announce a problem: logged too, because it may come before any window shows it
        (a config that does not load at start) or after the last one closed."""
        logger.error("%s%s", title, f"\n{detail}" if detail else "")
        problem = Problem(title, detail)
        self.problems = [*self.problems[-(MAX_KEPT - 1) :], problem]
        self.reported.emit(problem)

    def report_exception(self, title: str, error: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        self.report(f"{title}: {type(error).__name__}: {error}", detail)

    # Installing ------------------------------------------------------------------------------------

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._previous = {"excepthook": sys.excepthook, "threading": threading.excepthook}
        sys.excepthook = self._excepthook
        threading.excepthook = self._thread_hook
        if loop is not None:
            loop.set_exception_handler(self._loop_handler)
        qInstallMessageHandler(self._qt_message)

    def uninstall(self) -> None:
        if self._previous:
            sys.excepthook = self._previous["excepthook"]
            threading.excepthook = self._previous["threading"]
            self._previous = {}
        qInstallMessageHandler(None)

    def _excepthook(self, kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            self._previous.get("excepthook", sys.__excepthook__)(kind, error, tb)
            return
        self.report_exception("Unexpected error", error.with_traceback(tb))

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            name = args.thread.name if args.thread else "a thread"
            self.report_exception(f"Unexpected error in {name}", args.exc_value)

    def _loop_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        message = str(context.get("message") or "error in the event loop")
        if isinstance(error, BaseException):
            self.report_exception(message, error)
        else:
            logger.error("%s: %s", message, context)
            self.report(message, repr(context))

    def _qt_message(self, kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            logger.error("Qt: %s", message)
            self.report(f"Qt: {message}")
        elif kind == QtMsgType.QtWarningMsg:
            logger.warning("Qt: %s", message)
        else:
            logger.debug("Qt: %s", message)
