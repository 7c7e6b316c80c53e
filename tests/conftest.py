from __future__ import annotations

from pathlib import Path

import keyring
import pytest

from tests.helpers.vaults import keyring_env


@pytest.fixture(autouse=True)
def private_keyring(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets a keyring of its own (a real file backend), never the user's: in this process
    and in any child that inherits the environment (children given an explicit env take
    `keyring_env` from `tests.helpers.vaults`)."""
    folder = tmp_path_factory.mktemp("keyring")
    for name, value in keyring_env(folder).items():
        monkeypatch.setenv(name, value)
    keyring.set_keyring(keyring.core.load_keyring(keyring_env(folder)["PYTHON_KEYRING_BACKEND"]))
    return folder
