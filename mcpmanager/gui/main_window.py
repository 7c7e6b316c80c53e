"""The main window: pages on the left (servers, catalogue, try it, activity, clients), the error bar and the
first-run banner on top, the status bar below. Closing it keeps the engine running in the tray
(when the desktop has one); Quit stops every server.

Ctrl+F belongs to the window, not to a page: choosing a page in the sidebar leaves the focus in the
sidebar, outside every page, so a page's own shortcut would never hear it. The window sends it to the
current page's search field (`Searchable`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from mcpmanager import __version__
from mcpmanager.gui import style
from mcpmanager.gui.about import AboutDialog
from mcpmanager.gui.activity_page import ActivityPage
from mcpmanager.gui.approval_prompt import ApprovalPanel
from mcpmanager.gui.catalogue_page import CataloguePage
from mcpmanager.gui.clients_page import ClientsPage
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.error_bar import ErrorBar
from mcpmanager.gui.first_run import FirstRunBanner
from mcpmanager.gui.held_banner import HeldBanner
from mcpmanager.gui.servers_page import ServersPage
from mcpmanager.gui.status_bar import StatusBar
from mcpmanager.gui.try_it_page import TryItPage


@runtime_checkable
class Searchable(Protocol):
    """A page with a field to search or filter it: where Ctrl+F goes while the page is shown."""

    def search_field(self) -> QLineEdit | None: ...


class MainWindow(QMainWindow):
    quitRequested = Signal()

    def __init__(self, ctx: GuiContext, has_tray: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self.ctx = ctx
        self.about: AboutDialog | None = None
        self._has_tray = has_tray
        self.setWindowTitle("mcpmanager")
        self.setWindowIcon(style.app_icon())
        self.resize(1180, 760)

        self.servers = ServersPage(ctx)
        self.catalogue = CataloguePage(ctx)
        self.try_it = TryItPage(ctx)
        self.activity = ActivityPage(ctx)
        self.clients = ClientsPage(ctx)
        self.pages = QStackedWidget()
        self.nav = QListWidget()
        self.nav.setObjectName("nav")
        self.nav.setIconSize(QSize(18, 18))
        self.nav.setFixedWidth(150)
        self.nav.setStyleSheet(
            "#nav { border: none; border-right: 1px solid #d0d7de; background: #f6f8fa; padding-top: 6px; }"
            "#nav::item { padding: 7px 14px; border-radius: 6px; margin: 1px 6px; color: #1f2328; }"
            "#nav::item:selected { background: #dbe9fb; color: #0a3069; font-weight: 600; }"
        )
        for title, page in (
            ("Servers", self.servers),
            ("Catalogue", self.catalogue),
            ("Try it", self.try_it),
            ("Activity", self.activity),
            ("Clients", self.clients),
        ):
            self.pages.addWidget(page)
            QListWidgetItem(title, self.nav)
        self.nav.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.find_action = QAction("&Find in this page", self)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        self.find_action.triggered.connect(self.find_in_page)
        self.pages.currentChanged.connect(self._page_changed)
        self.nav.setCurrentRow(0)
        self._page_changed()

        self.error_bar = ErrorBar(ctx.errors)
        ctx.signals.configRejected.connect(
            lambda reason: ctx.errors.report(f"Config change not applied (the running setup stays): {reason}")
        )
        self.first_run = FirstRunBanner(ctx)
        self.approvals = ApprovalPanel(ctx)  # calls waiting for the user's answer: the window is asked
        self.approvals.asked.connect(lambda _ask: QApplication.alert(self))  # flash, never steal the focus
        self.held = HeldBanner(ctx)  # tools held for review (changed or new since approved)
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(0)
        right.addWidget(self.error_bar)
        right.addWidget(self.approvals)
        right.addWidget(self.first_run)
        right.addWidget(self.held)
        right.addWidget(self.pages, 1)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.nav)
        body.addLayout(right, 1)
        central = QWidget()
        central.setLayout(body)
        self.setCentralWidget(central)
        self.status = StatusBar(ctx)
        self.setStatusBar(self.status)
        self._menus()

    def show_page(self, page: QWidget) -> None:
        self.nav.setCurrentRow(self.pages.indexOf(page))

    def search_field(self) -> QLineEdit | None:
        page = self.pages.currentWidget()
        return page.search_field() if isinstance(page, Searchable) else None

    def _page_changed(self, *_: int) -> None:
        self.find_action.setEnabled(self.search_field() is not None)  # a page with nothing to search: off

    def find_in_page(self) -> None:
        """Ctrl+F: into the current page's search field, its text selected to be typed over."""
        field = self.search_field()
        if field is not None:
            field.setFocus(Qt.FocusReason.ShortcutFocusReason)
            field.selectAll()

    def _menus(self) -> None:
        file = self.menuBar().addMenu("&File")
        quit_action = QAction("&Quit (stop every server)", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.quitRequested.emit)
        file.addAction(quit_action)
        view = self.menuBar().addMenu("&View")
        for row, title in enumerate(("&Servers", "&Catalogue", "&Try it", "&Activity", "C&lients")):
            action = QAction(title, self)
            action.setShortcut(QKeySequence(f"Ctrl+{row + 1}"))
            action.triggered.connect(lambda _=False, r=row: self.nav.setCurrentRow(r))
            view.addAction(action)
        view.addSeparator()
        view.addAction(self.find_action)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction(f"&About mcpmanager {__version__}…", self)
        about.setMenuRole(QAction.MenuRole.AboutRole)
        about.triggered.connect(self.show_about)
        help_menu.addAction(about)

    def show_about(self) -> AboutDialog:
        if self.about is None:
            self.about = AboutDialog(self.ctx.engine.paths, self)
        self.about.show()  # non-modal: never exec() under qasync
        self.about.raise_()
        return self.about

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._has_tray():
            event.ignore()  # the engine goes on in the tray
            self.hide()
        else:
            event.accept()  # nowhere to go on without a window: quit, stopping every server
            self.quitRequested.emit()
