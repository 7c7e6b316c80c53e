from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.engines import stop_engines
from tests.helpers.fixture_servers import engine_home
from tests.helpers.published import Config, install_published


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def user(tmp_path: Path) -> Iterator[Path]:
    """A user's mcpmanager home with two fixture servers in its config; no engine runs yet."""
    home = engine_home(tmp_path / "home")
    try:
        yield home
    finally:
        stop_engines(home)


@pytest.fixture(scope="session")
def published() -> Config:
    """Install the published servers (a no-op when they are) and return the generated config."""
    return install_published()
