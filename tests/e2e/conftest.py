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


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install the published servers once, before the first test that needs them, outside every
    test's timeout: a first install takes minutes (Claude Code alone is about 400 MB), more than
    the 120 s one test may take, so whichever test came first would fail its setup."""
    if session.config.option.collectonly:
        return
    if any(
        item.get_closest_marker("published") or "published" in getattr(item, "fixturenames", ())
        for item in session.items
    ):
        install_published()


@pytest.fixture(scope="session")
def published() -> Config:
    """Install the published servers (a no-op when they are) and return the generated config."""
    return install_published()
