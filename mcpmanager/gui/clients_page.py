"""The Clients page: where clients connect (the endpoint and its per-mode URLs, the bearer token), and
one row per client found on this machine, with whether mcpmanager is installed there and in which
mode, Install, Undo and Import.

Everything that touches a file runs off the UI thread (`asyncio.to_thread` inside `ctx.run`, which
reports failures through the error funnel). Install and Undo show their preview first (the diff of
the client's file, secrets masked) in a non-modal dialog (`open()`, never `exec()`: a nested event
loop would stall the engine on qasync); only its confirmation writes, with the backup and checks of
`core/clients/install.py` (a file changed since the preview is not written). Import shows what it
would add (`ImportPreview`, which offers to move the servers' secrets into the keyring) and goes
through `Control`, so the running engine takes the servers at once.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.change import Change, Target, TargetState
from mcpmanager.core.clients.errors import ClientNotFound, InstallError
from mcpmanager.core.clients.importing import ImportPlan, plan_for, read_client, secrets_to_keyring
from mcpmanager.core.clients.install import (
    inspect,
    install_targets,
    plan_install,
    plan_undo,
)
from mcpmanager.core.clients.locations import CLIENTS, client_names
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.modes import DEFAULT_MODE, MODES, Mode, is_mode
from mcpmanager.core.engine.control import ControlError
from mcpmanager.core.serve.bearer_token import read_token, token_path
from mcpmanager.core.system.own_command import mcpmanager_command
from mcpmanager.core.vault.store import Vault, VaultError
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.import_preview import ImportPreview

T = TypeVar("T")


@dataclass
class ClientRow:
    """The widgets of one client file's row."""

    target: Target
    label: QLabel
    path: QLabel
    state: QLabel
    mode: QComboBox
    install: QPushButton
    undo: QPushButton
    import_: QPushButton
    shown_mode: str | None = "?"  # the installed mode the mode choice was last set from

    def widgets(self) -> tuple[QWidget, ...]:
        return (self.label, self.path, self.state, self.mode, self.install, self.undo, self.import_)


class PreviewDialog(QDialog):
    """The change about to be written, to confirm or cancel (non-modal)."""

    def __init__(self, change: Change, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.change = change
        target, verb = change.target, ("Install mcpmanager in" if change.action == "install" else "Undo in")
        self.setWindowTitle(f"{verb} {target.label}")
        self.resize(760, 520)
        lines = [f"<b>{verb} {target.label}</b>: {target.path}"]
        if change.action == "install":
            lines.append("The file is backed up next to it first; Undo restores it.")
            if change.moved:
                lines.append(f"Turned off there (mcpmanager serves them): {', '.join(change.moved)}")
        elif change.restore is not None:
            lines.append(f"Restored byte for byte from {change.restore}")
        lines += list(change.notes)
        self.summary = QLabel("<br>".join(lines))
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.diff = QPlainTextEdit(change.diff())
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Install" if change.action == "install" else "Undo")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self.buttons)


class ClientsPage(QWidget):
    def __init__(
        self,
        ctx: GuiContext,
        home: Path | None = None,
        platform: str = sys.platform,
        env: Mapping[str, str] | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        self.home = home or Path.home()
        self.platform = platform
        self.env = os.environ if env is None else env
        self.command = list(command) if command is not None else mcpmanager_command()
        self.rows: list[ClientRow] = []
        self.preview: PreviewDialog | None = None
        self.import_preview: ImportPreview | None = None
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._loading = False
        self._again = False

        # Endpoint and token.
        self.endpoint = self._url_field()
        self.discovery_url = self._url_field()
        self.direct_url = self._url_field()
        self.token = QLineEdit()
        self.token.setReadOnly(True)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.reveal = QPushButton("Reveal")
        self.reveal.setCheckable(True)
        self.reveal.toggled.connect(self._reveal)
        self.copy_token = QPushButton("Copy")
        self.copy_token.clicked.connect(lambda: self._copy(self.token.text()))
        self.token_note = QLabel()
        self.token_note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Endpoint", self._with_copy(self.endpoint))
        form.addRow("Discovery mode", self._with_copy(self.discovery_url))
        form.addRow("Direct mode", self._with_copy(self.direct_url))
        token_row = QHBoxLayout()
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.reveal)
        token_row.addWidget(self.copy_token)
        form.addRow("Bearer token", token_row)
        endpoint_box = QGroupBox("Where clients connect")
        endpoint_layout = QVBoxLayout(endpoint_box)
        endpoint_layout.addLayout(form)
        endpoint_layout.addWidget(self.token_note)  # below the form: a wrapped label in a form row gets slack
        endpoint_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        # Clients.
        self.grid = QGridLayout()
        self.grid.setColumnStretch(1, 1)
        for column, title in enumerate(("Client", "Config file", "mcpmanager", "Mode", "", "", "")):
            header = QLabel(f"<b>{title}</b>")
            self.grid.addWidget(header, 0, column)
        self.none_found = QLabel(f"No {client_names()} was found on this machine.")
        self.none_found.hide()
        self.disable_served = QCheckBox(
            "When installing, turn off in the client the servers mcpmanager already serves "
            "(so their tools are not loaded twice; Undo turns them back on)"
        )
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        table = QWidget()
        rows = QVBoxLayout(table)
        rows.addLayout(self.grid)
        rows.addStretch(1)  # the rows sit at the top, however few
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(table)
        clients_layout = QVBoxLayout()
        clients_layout.addWidget(scroll, 1)
        clients_layout.addWidget(self.none_found)
        clients_layout.addWidget(self.disable_served)
        bottom = QHBoxLayout()
        bottom.addWidget(self.message, 1)
        bottom.addWidget(self.refresh_button)
        clients_layout.addLayout(bottom)
        clients_box = QGroupBox("Clients")
        clients_box.setLayout(clients_layout)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(endpoint_box)
        layout.addWidget(clients_box, 1)
        ctx.signals.serversChanged.connect(self.refresh)  # the endpoint came up, or the served servers changed
        self.refresh()

    # Endpoint and token -----------------------------------------------------------------------------

    def _url_field(self) -> QLineEdit:
        field = QLineEdit()
        field.setReadOnly(True)
        return field

    def _with_copy(self, field: QLineEdit) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(field, 1)
        button = QPushButton("Copy")
        button.clicked.connect(lambda: self._copy(field.text()))
        field.setProperty("copyButton", button)
        row.addWidget(button)
        return row

    def _copy(self, text: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)

    def _reveal(self, shown: bool) -> None:
        self.token.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.reveal.setText("Hide" if shown else "Reveal")

    def refresh_endpoint(self) -> None:
        endpoint = self.ctx.engine.endpoint
        serving = endpoint.startswith(("http://", "https://"))
        base = endpoint.rstrip("/")
        self.endpoint.setText(base if serving else "")
        self.endpoint.setPlaceholderText("not serving over HTTP yet")
        self.discovery_url.setText(f"{base}/discovery" if serving else "")
        self.direct_url.setText(f"{base}/direct" if serving else "")
        token = read_token(self.ctx.engine.paths.runtime_dir)  # a few bytes: no need for a thread
        self.token.setText(token or "")
        self.token.setPlaceholderText("no token yet")
        self.reveal.setEnabled(token is not None)
        self.copy_token.setEnabled(token is not None)
        where = token_path(self.ctx.engine.paths.runtime_dir)
        self.token_note.setText(
            f"Sent as <code>Authorization: Bearer …</code> by HTTP clients; kept in {where}. "
            "`mcpmanager connect` (what Install writes) reads it itself."
            if token
            else f"No token yet: the engine makes one ({where}) when it first serves over HTTP."
        )

    # Clients ------------------------------------------------------------------------------------------

    def refresh(self, *_: object) -> None:
        """Look at the endpoint, the token and every client's file again (files off the UI thread)."""
        self.refresh_endpoint()
        if self._loading:
            self._again = True  # one more look after the one under way
            return
        self._loading = True
        self.ctx.run(self._load(), "look at the clients' config files")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # a client may have changed its file while another page was shown

    async def _load(self) -> None:
        try:
            while True:
                self._again = False
                states = await asyncio.to_thread(self._scan, self.ctx.engine.config)
                self._show(states)
                if not self._again:
                    return
        finally:
            self._loading = False

    def _scan(self, config: Config) -> list[TargetState]:
        states: list[TargetState] = []
        for client in CLIENTS:
            try:
                targets = install_targets(client, self.home, self.platform, self.env)
            except ClientNotFound:
                continue
            states += [inspect(target, config, self.home) for target in targets]
        return states

    def _show(self, states: list[TargetState]) -> None:
        if [row.target for row in self.rows] != [state.target for state in states]:
            self._rebuild([state.target for state in states])
        for row, state in zip(self.rows, states, strict=True):
            self._show_state(row, state)
        self.none_found.setVisible(not states)

    def _rebuild(self, targets: list[Target]) -> None:
        for row in self.rows:
            for widget in row.widgets():
                self.grid.removeWidget(widget)
                widget.deleteLater()
        self.rows = []
        for number, target in enumerate(targets, start=1):
            mode = QComboBox()
            mode.addItems(list(MODES))
            mode.setToolTip("What this client sees: the meta-tools (discovery) or every tool (direct)")
            row = ClientRow(
                target,
                QLabel(target.label),
                QLabel(str(target.path)),
                QLabel(),
                mode,
                QPushButton("Install…"),
                QPushButton("Undo…"),
                QPushButton("Import…"),
            )
            row.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            row.state.setWordWrap(True)
            row.install.clicked.connect(lambda _=False, r=row: self.install(r))
            row.undo.clicked.connect(lambda _=False, r=row: self.undo(r))
            row.import_.clicked.connect(lambda _=False, r=row: self.import_servers(r))
            row.import_.setToolTip(f"Add the servers {target.label} has to mcpmanager")
            for column, cell in enumerate(row.widgets()):
                self.grid.addWidget(cell, number, column)
            self.rows.append(row)

    def _show_state(self, row: ClientRow, state: TargetState) -> None:
        exists = state.target.path.exists()
        if state.problem is not None:
            text = f"cannot be changed: {state.problem}"
        elif state.mode is None:
            text = "not installed" + ("" if exists else " (the file will be created)")
        elif state.mode == "default":
            text = f"installed, the engine's mode ({self.ctx.engine.config.proxy.mode})"
        else:
            text = f"installed, {state.mode} mode"
        if state.disabled:
            text += f"; turned off here by mcpmanager: {', '.join(state.disabled)}"
        if state.served:
            text += f"; also served by mcpmanager (tools loaded twice): {', '.join(state.served)}"
        row.state.setText(text)
        row.state.setProperty("installedMode", state.mode)
        if row.shown_mode != state.mode:  # follow the file, but never undo a choice the user is making
            row.shown_mode = state.mode
            row.mode.setCurrentText(state.mode if state.mode in MODES else self.ctx.engine.config.proxy.mode)
        row.install.setEnabled(state.problem is None)
        row.undo.setEnabled(state.problem is None and (state.mode is not None or bool(state.disabled)))
        row.import_.setEnabled(exists)

    # Actions ------------------------------------------------------------------------------------------

    def install(self, row: ClientRow) -> None:
        chosen = row.mode.currentText()
        mode: Mode = chosen if is_mode(chosen) else DEFAULT_MODE
        disable, config = self.disable_served.isChecked(), self.ctx.engine.config

        async def preview() -> None:
            change = await _guarded(
                asyncio.to_thread(
                    plan_install, row.target, self.command, mode, config=config, disable_served=disable, home=self.home
                )
            )
            if not change.changed:
                self.message.setText(f"mcpmanager is already installed in {row.target.label}, {mode} mode.")
                return
            self._confirm(change)

        self.ctx.run(preview(), f"install mcpmanager in {row.target.label}")

    def undo(self, row: ClientRow) -> None:
        async def preview() -> None:
            change = await _guarded(asyncio.to_thread(plan_undo, row.target))
            if not change.changed:
                self.message.setText("; ".join(change.notes) or "Nothing to undo.")
                return
            self._confirm(change)

        self.ctx.run(preview(), f"undo in {row.target.label}")

    def _confirm(self, change: Change) -> None:
        if self.preview is not None:  # one preview at a time: the last one asked for
            self.preview.close()
            self.preview.deleteLater()
        dialog = PreviewDialog(change, self)
        dialog.accepted.connect(lambda: self._write(change))
        self.preview = dialog
        dialog.open()  # non-modal for the event loop: open(), never exec()

    def _write(self, change: Change) -> None:
        target = change.target

        async def write() -> None:
            backup = await _guarded(asyncio.to_thread(apply_change, change))
            if change.action == "install":
                kept = f"backup: {backup}" if backup else "a new file"
                done = f"Installed mcpmanager in {target.label} ({kept}). Restart {target.label} to load it."
            elif change.exact:
                done = f"Undone in {target.label}: {target.path} is as it was."
            else:
                done = f"Undone in {target.label}: " + "; ".join(change.notes)
            self.message.setText(done)
            self.refresh()

        self.ctx.run(write(), f"{change.action} in {target.label}")

    def import_servers(self, row: ClientRow) -> None:
        """Read the client's files and show what importing would do (`ImportPreview`); its Import imports."""
        client, label = row.target.client, CLIENTS.get(row.target.client, row.target.client)
        control = self.ctx.control

        async def preview() -> None:
            sources = await _guarded(asyncio.to_thread(read_client, client, self.home, self.platform, self.env))
            config = await asyncio.to_thread(lambda: control.current() if control.path.exists() else Config())
            if self.import_preview is not None:  # one preview at a time: the last one asked for
                self.import_preview.close()
                self.import_preview.deleteLater()
            keyring = await asyncio.to_thread(Vault().summary)  # finding the backend may ask D-Bus
            dialog = ImportPreview(plan_for(client, sources, config), keyring, self)
            dialog.accepted.connect(lambda: self._import(dialog.plan, dialog.to_keyring.isChecked()))
            self.import_preview = dialog
            dialog.open()

        self.ctx.run(preview(), f"read the servers of {label}")

    def _import(self, plan: ImportPlan, to_keyring: bool) -> None:
        async def bring_in() -> None:
            candidates = plan.candidates
            if to_keyring:  # stored first (a worker thread: the keyring blocks); a failure imports nothing
                try:
                    candidates = await asyncio.to_thread(secrets_to_keyring, plan, Vault())
                except VaultError as exc:
                    raise ControlError(f"{exc}; nothing was imported") from exc
            added, skipped = await self.ctx.control.import_servers(candidates)
            text = f"Imported {len(added)} server{'s' if len(added) != 1 else ''} from {plan.label}"
            text += f" ({len(skipped)} already in mcpmanager)." if skipped else "."
            self.message.setText(text + (" Their secrets are in the keyring." if to_keyring else ""))
            if plan.problems:
                problems = plan.problems
                self.ctx.errors.report(
                    f"Imported from {plan.label}, with {len(problems)} problems", "\n".join(problems)
                )

        self.ctx.run(bring_in(), f"import the servers of {plan.label}")


async def _guarded(work: Awaitable[T]) -> T:
    """What a file refuses (a file that does not read, a client gone, a file changed since the
    preview) is a change not made: shown in one line, not as a crash with a traceback."""
    try:
        return await work
    except (InstallError, ClientNotFound, ConfigError) as exc:
        raise ControlError(str(exc)) from exc
