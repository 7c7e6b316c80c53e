"""The record of an engine's process groups, and ending what a killed engine left: with real
processes in sessions of their own, as servers are spawned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpmanager.core.system.process_groups import FOLDER, ProcessGroups, reap_left_behind, start_ticks
from tests.helpers.engines import pid_alive

SLEEPER = [sys.executable, "-c", "import time\nwhile True: time.sleep(3600)"]


@pytest.fixture
def leaders() -> Iterator[list[subprocess.Popen[bytes]]]:
    made: list[subprocess.Popen[bytes]] = []
    yield made
    for process in made:
        process.kill()
        process.wait()


def leader(made: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(SLEEPER, start_new_session=True)
    made.append(process)
    return process


def gone(process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + 5
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return process.poll() is not None


def record(runtime: Path, engine: int, groups: dict[int, int | None], engine_ticks: int | None = None) -> Path:
    path = runtime / FOLDER / f"{engine}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"engine": engine, "engine_ticks": engine_ticks, "groups": groups}))
    return path


def a_dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_the_record_follows_the_live_groups(tmp_path: Path, leaders: list[subprocess.Popen[bytes]]) -> None:
    groups = ProcessGroups(tmp_path)
    one, two = leader(leaders), leader(leaders)
    groups.add(one.pid)
    groups.add(two.pid)
    assert groups.path is not None
    written = json.loads(groups.path.read_text())
    assert written["engine"] == os.getpid()
    assert written["groups"] == {str(one.pid): start_ticks(one.pid), str(two.pid): start_ticks(two.pid)}
    groups.remove(one.pid)
    assert list(json.loads(groups.path.read_text())["groups"]) == [str(two.pid)]
    groups.remove(two.pid)
    assert not groups.path.exists()  # nothing live, nothing on record
    groups.close()


def test_after_kill_all_a_group_that_starts_is_ended_as_it_is_added(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    """The second signal's "now" holds for a server its supervisor restarts before the engine's stop
    reaches it."""
    groups = ProcessGroups(tmp_path)
    before = leader(leaders)
    groups.add(before.pid)
    groups.kill_all()
    assert gone(before)
    after = leader(leaders)
    groups.add(after.pid)
    assert gone(after)
    groups.close()


def test_a_dead_engines_groups_are_ended_and_a_live_ones_left(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    orphan, kept = leader(leaders), leader(leaders)
    dead_record = record(tmp_path, a_dead_pid(), {orphan.pid: start_ticks(orphan.pid)})
    live_record = record(tmp_path, os.getppid(), {kept.pid: start_ticks(kept.pid)}, start_ticks(os.getppid()))
    assert reap_left_behind(tmp_path) == 1
    assert gone(orphan) and not dead_record.exists()
    assert pid_alive(kept.pid) and live_record.exists()


def test_a_reused_number_is_not_ended(tmp_path: Path, leaders: list[subprocess.Popen[bytes]]) -> None:
    """A process of the recorded session that started before its recorded leader is not of it."""
    process = leader(leaders)
    ticks = start_ticks(process.pid)
    assert ticks is not None
    record(tmp_path, a_dead_pid(), {process.pid: ticks + 1})
    assert reap_left_behind(tmp_path) == 0
    assert pid_alive(process.pid)


def test_an_unreadable_record_is_dropped(tmp_path: Path) -> None:
    broken = tmp_path / FOLDER / "123.json"
    broken.parent.mkdir()
    broken.write_text("{not json")
    assert reap_left_behind(tmp_path) == 0
    assert not broken.exists()


def test_a_record_whose_start_time_is_not_a_number_is_dropped_not_raised(
    tmp_path: Path, leaders: list[subprocess.Popen[bytes]]
) -> None:
    """(It raised TypeError out of the engine's start, or the watchdog, comparing a live session's
    start times with it.) Nothing it names can be told from a reused number, so nothing is ended."""
    live = leader(leaders)
    path = record(tmp_path, a_dead_pid(), {live.pid: "x"})  # type: ignore[dict-item]
    assert reap_left_behind(tmp_path) == 0
    assert not path.exists() and live.poll() is None
