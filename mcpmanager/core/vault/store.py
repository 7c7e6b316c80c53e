"""The OS keyring (Secret Service, Keychain, Credential Manager) through the `keyring` package.

Every entry lives under one service name, `mcpmanager`, keyed by a name the user or mcpmanager
chose (`github-token`, `oauth/notion`). Where no OS keyring exists (a headless Linux box), `keyring`
picks the file backend of `keyrings.alt`: a file readable only by the user, outside mcpmanager's own
folders, not encrypted; `Vault.describe` says which one is in use (docs/trust.md).

The calls block (Secret Service is a D-Bus round trip, and may show an unlock prompt): async code
runs them in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import keyring
import keyring.errors
from keyring.backend import KeyringBackend

SERVICE = "mcpmanager"


class VaultError(Exception):
    """The keyring could not be read or written. The message names the entry, never its value."""


@dataclass(frozen=True)
class Vault:
    backend: KeyringBackend | None = None  # None: the one `keyring` chooses (its config, its env)

    def get(self, name: str) -> str | None:
        try:
            return self._keyring().get_password(SERVICE, name)
        except keyring.errors.KeyringError as error:
            raise VaultError(f"cannot read '{name}' from the keyring ({self.describe()}): {error}") from None

    def set(self, name: str, value: str) -> None:
        if not name:
            raise VaultError("a keyring entry needs a name")
        try:
            self._keyring().set_password(SERVICE, name, value)
        except keyring.errors.KeyringError as error:
            raise VaultError(f"cannot store '{name}' in the keyring ({self.describe()}): {error}") from None

    def delete(self, name: str) -> bool:
        """Remove `name`; False when it was not there."""
        try:
            self._keyring().delete_password(SERVICE, name)
        except keyring.errors.PasswordDeleteError:
            return False
        except keyring.errors.KeyringError as error:
            raise VaultError(f"cannot remove '{name}' from the keyring ({self.describe()}): {error}") from None
        return True

    def describe(self) -> str:
        """Which keyring holds the secrets, and for a file backend where and whether it is encrypted."""
        backend = self._keyring()
        name = f"{type(backend).__module__}.{type(backend).__qualname__}"
        path = getattr(backend, "file_path", None)
        if path is None:
            return name
        encrypted = "encrypted" if getattr(backend, "encrypted", lambda: False)() else "not encrypted"
        return f"{name}: the file {path}, {encrypted}"

    def summary(self) -> str:
        """`keyring: …` in one line for a person: which keyring, and plainly when it is the fallback."""
        try:
            described, plain = self.describe(), self.unencrypted_file()
        except Exception as exc:  # no usable backend at all: say so rather than fail what asked
            return f"keyring: none usable ({type(exc).__name__}: {exc})"
        if plain:
            return f"keyring: {described} (the fallback where no OS keyring runs; only you can read it)"
        return f"keyring: {described}"

    def unencrypted_file(self) -> bool:
        """The fallback: a plain file (keyrings.alt's), protected only by its permissions."""
        backend = self._keyring()
        encrypted = getattr(backend, "encrypted", None)
        return getattr(backend, "file_path", None) is not None and not (encrypted is not None and encrypted())

    def _keyring(self) -> KeyringBackend:
        return self.backend if self.backend is not None else keyring.get_keyring()
