"""Signing in to a remote server from the window: a Sign in button on a server whose light says it
needs one, a Sign out button on one that is signed in. The same flow as `mcpmanager login`
(`core/auth`), with the system browser opened by Qt; the window stays responsive while the browser
is out, and the server is connected again once the tokens are in the keyring."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from mcpmanager.core.auth.loopback import SignInFailed
from mcpmanager.core.auth.provider import uses_oauth
from mcpmanager.core.auth.sign_in import sign_in, sign_out
from mcpmanager.core.auth.storage import read_tokens
from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.filled import filled_server
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.tasks import spawn
from mcpmanager.core.vault.store import Vault, VaultError


async def open_in_browser(url: str) -> None:
    if not QDesktopServices.openUrl(QUrl(url)):
        raise SignInFailed(f"no browser could be opened; open this address to sign in: {url}")


class SignInBar(QWidget):
    def __init__(self, engine: Engine, vault: Vault | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.vault = vault or Vault()
        self.open_url: Callable[[str], Awaitable[None]] = open_in_browser  # tests put a scripted agent here
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # an address to copy
        self.sign_in_button = QPushButton("Sign in")
        self.sign_in_button.setToolTip("Open the server's sign-in page in your browser")
        self.sign_out_button = QPushButton("Sign out")
        self.sign_out_button.setToolTip("Forget this server's tokens (and revoke them where it can)")
        self.sign_in_button.clicked.connect(self._sign_in)
        self.sign_out_button.clicked.connect(self._sign_out)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.sign_in_button)
        layout.addWidget(self.sign_out_button)
        self._config: HttpServerConfig | None = None
        self._state: State | None = None
        self._busy: asyncio.Task[None] | None = None
        self._signed_in = False
        self._said = ""  # how the last sign-in or sign-out went, until the next or another server
        self.setVisible(False)

    def show_for(self, downstream: Downstream | None) -> None:
        """Follow `downstream` (its config and state); only a remote server signed in with OAuth shows."""
        config = downstream.config if downstream is not None else None
        if not isinstance(config, HttpServerConfig) or not uses_oauth(config):
            self._config = self._state = None
            self.setVisible(False)
            return
        state = downstream.status.state if downstream is not None else None
        if config != self._config or state != self._state:
            if config != self._config:
                self._said = ""
            self._config, self._state = config, state
            spawn(self._look(config), name=f"signed in? {config.name}")
        self._show()

    async def _look(self, config: HttpServerConfig) -> None:
        """Whether the keyring holds tokens for it (a worker thread: the keyring may block)."""
        try:
            found = await anyio.to_thread.run_sync(read_tokens, self.vault, config.name)
        except VaultError:
            found = None
        if config == self._config:
            self._signed_in = found is not None
            self._show()

    def _show(self) -> None:
        busy = self._busy is not None and not self._busy.done()
        needs = self._state is State.NEEDS_SIGN_IN
        self.sign_in_button.setVisible(needs or busy)
        self.sign_in_button.setText("Cancel" if busy else "Sign in")
        self.sign_out_button.setVisible(self._signed_in and not needs and not busy)
        if busy:
            text = "Waiting for you to finish in your browser…"
        elif self._said:
            text = self._said
        elif needs:
            text = "This server wants you to sign in: Sign in opens its page in your browser."
        else:
            text = "Signed in; the tokens are in the keyring." if self._signed_in else ""
        self.note.setText(text)
        self.setVisible(bool(text) or needs)

    def _sign_in(self) -> None:
        if self._busy is not None and not self._busy.done():
            self._busy.cancel()  # Cancel: the browser was closed, or the page is elsewhere
            return
        config = self._config
        if config is not None:
            self._said = ""
            self._busy = spawn(self._run(config, signing_in=True), name=f"sign in: {config.name}")
            self._show()

    def _sign_out(self) -> None:
        config = self._config
        if config is not None and (self._busy is None or self._busy.done()):
            self._busy = spawn(self._run(config, signing_in=False), name=f"sign out: {config.name}")
            self._show()

    async def _run(self, config: HttpServerConfig, signing_in: bool) -> None:
        try:
            if signing_in:
                filled = await anyio.to_thread.run_sync(filled_server, config, self.vault)
                assert isinstance(filled, HttpServerConfig)
                await sign_in(filled, self.vault, self.open_url)
                said = f"Signed in to {config.name}."
            else:
                done = await sign_out(config, self.vault)
                said = f"Signed out of {config.name}" + (" (tokens revoked)." if done.revoked else ".")
        except (SignInFailed, VaultError) as exc:
            said = f"Sign-in failed: {exc}" if signing_in else f"Sign-out failed: {exc}"
        except asyncio.CancelledError:  # Cancel: nothing changed, the server stays as it is
            self._said, self._busy = "Sign-in cancelled.", None
            self._show()
            return
        self._signed_in = signing_in and said.startswith("Signed in")
        self._said = said
        downstream = self.engine.downstreams.get(config.name)
        if downstream is not None and not downstream.config.disabled:
            await downstream.restart()  # connect again: with the new tokens, or without any
        self._busy = None
        self._show()
