"""A real keyring for tests: keyrings.alt's file backend in a folder of the test's own."""

from __future__ import annotations

import os
from pathlib import Path

import keyring.errors
from keyring.backend import KeyringBackend

FILE_BACKEND = "keyrings.alt.file.PlaintextKeyring"


def keyring_env(folder: Path) -> dict[str, str]:
    """The environment that puts `keyring` (in this process or a child) on the file in `folder`."""
    return {"XDG_DATA_HOME": str(folder), "PYTHON_KEYRING_BACKEND": FILE_BACKEND}


def keyring_file(folder: Path) -> Path:
    return folder / "python_keyring" / "keyring_pass.cfg"


def current_keyring_env() -> dict[str, str]:
    """This process's keyring settings (the test's private keyring), for a child given an explicit env."""
    return {name: os.environ[name] for name in ("XDG_DATA_HOME", "PYTHON_KEYRING_BACKEND") if name in os.environ}


class LockedKeyring(KeyringBackend):
    """A keyring that refuses every call, as a locked Secret Service collection does."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.KeyringLocked("the collection is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.KeyringLocked("the collection is locked")
