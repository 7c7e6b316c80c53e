from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.support import stop_engines, user_home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def user(tmp_path: Path) -> Iterator[Path]:
    """A user's mcpmanager home with two fixture servers in its config; no engine runs yet."""
    home = user_home(tmp_path / "home")
    try:
        yield home
    finally:
        stop_engines(home)
