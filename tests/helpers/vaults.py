"""A real keyring for tests: keyrings.alt's file backend in a folder of the test's own."""

from __future__ import annotations

from pathlib import Path

FILE_BACKEND = "keyrings.alt.file.PlaintextKeyring"


def keyring_env(folder: Path) -> dict[str, str]:
    """The environment that puts `keyring` (in this process or a child) on the file in `folder`."""
    return {"XDG_DATA_HOME": str(folder), "PYTHON_KEYRING_BACKEND": FILE_BACKEND}


def keyring_file(folder: Path) -> Path:
    return folder / "python_keyring" / "keyring_pass.cfg"
