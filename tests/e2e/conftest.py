from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.support import FAST, fixture, stop_engines


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def user(tmp_path: Path) -> Iterator[Path]:
    """A user's mcpmanager home with two fixture servers in its config; no engine runs yet."""
    home = tmp_path / "home"
    home.mkdir()
    servers = {"a": fixture("--name", "a", "--changing-tools"), "b": fixture("--name", "b")}
    (home / "config.json").write_text(json.dumps({"mcpServers": servers, "supervisor": FAST}), encoding="utf-8")
    try:
        yield home
    finally:
        stop_engines(home)
