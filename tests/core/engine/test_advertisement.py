"""Engines' advertisement files as `status`, `pins` and `connect` read them: a live engine's file
that cannot be read is said (the engine is there, its state unknown), never taken for no engine;
a file whose engine is gone is removed, readable or not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpmanager.commands.status import format_engine
from mcpmanager.core.engine.advertisement import (
    LAST_CONFIG,
    engines_dir,
    last_config,
    read_advertisements,
    remember_config,
    write_advertisement,
)
from mcpmanager.core.engine.single_instance import running_engine


def test_a_live_engine_s_damaged_advertisement_is_said_not_hidden(tmp_path: Path) -> None:
    path = write_advertisement(tmp_path, {"pid": os.getpid(), "endpoint": "stdio", "servers": {}})
    path.write_text('{"pid": 1, "endpo', encoding="utf-8")  # damaged by hand, or by the disk
    [found] = read_advertisements(tmp_path)
    assert found["pid"] == os.getpid() and found["servers"] == {}
    [damaged] = found["damaged"]
    assert damaged["file"] == str(path) and damaged["reason"] and damaged["effect"]
    assert format_engine(found).splitlines() == [
        f"engine pid {os.getpid()} (its advertisement cannot be read)",
        f"  damaged file {path} ({damaged['reason']}): {damaged['effect']}",
    ]
    assert running_engine(tmp_path) is None  # no endpoint to reach it by


def test_a_gone_engine_s_file_is_removed_readable_or_not(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = engines_dir(tmp_path)
    folder.mkdir(parents=True)
    stale = folder / f"{int(gone.stdout)}.json"
    stale.write_text("{garbled", encoding="utf-8")
    assert read_advertisements(tmp_path) == [] and not stale.exists()


@pytest.mark.parametrize("damage", [b"\xff\xfe not a path", b"", b"\x00"])
def test_a_damaged_last_config_record_means_the_default_config(tmp_path: Path, damage: bytes) -> None:
    remember_config(tmp_path, tmp_path / "config.json")
    (tmp_path / LAST_CONFIG).write_bytes(damage)
    assert last_config(tmp_path) is None  # `connect` starts an engine on the default config, as with none
