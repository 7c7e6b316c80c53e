"""The watchdog (`core/system/watchdog.py`) with a real stand-in engine: a Python process that keeps a
`ProcessGroups` record of a real leader in a session of its own, then is SIGKILLed or stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpmanager.core.system import watchdog
from mcpmanager.core.system.process_groups import FOLDER
from tests.helpers.engines import pid_alive

# The stand-in: records the leader, says so, then dies as told ("kill": SIGKILL; "stop": `close`).
ENGINE = """
import os, signal, sys, time
from pathlib import Path
from mcpmanager.core.system.process_groups import ProcessGroups
from mcpmanager.core.system.watchdog import start_watchdog
groups = ProcessGroups(Path(sys.argv[1]), start_watchdog)
groups.add(int(sys.argv[2]))
print(groups._watchdog.process.pid, flush=True)
sys.stdin.readline()
if sys.argv[3] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
groups.close()
"""
SLEEPER = [sys.executable, "-c", "import time\nwhile True: time.sleep(3600)"]


@pytest.fixture
def leader() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(SLEEPER, start_new_session=True)
    time.sleep(0.1)
    assert process.poll() is None  # (a leader that is alive to be ended)
    yield process
    process.kill()
    process.wait()


def engine(runtime: Path, leader: int, end: str) -> tuple[subprocess.Popen[str], int]:
    stand_in = subprocess.Popen(
        [sys.executable, "-c", ENGINE, str(runtime), str(leader), end],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stand_in.stdout is not None
    return stand_in, int(stand_in.stdout.readline())


def ignored(pid: int) -> set[int]:
    """The signals `pid` ignores (its SigIgn mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    return set()


def within(seconds: float, condition: object) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.01)
    return False


def test_a_killed_engine_s_groups_are_ended_by_its_watchdog_at_once(
    tmp_path: Path, leader: subprocess.Popen[bytes]
) -> None:
    stand_in, dog = engine(tmp_path, leader.pid, "kill")
    assert pid_alive(dog) and (tmp_path / FOLDER / f"{stand_in.pid}.json").exists()
    stand_in.communicate("\n", timeout=10)
    assert stand_in.returncode == -signal.SIGKILL
    assert within(2, lambda: leader.poll() is not None), "the leader outlived the engine"
    assert within(2, lambda: not pid_alive(dog)), "the watchdog outlived its work"
    assert not (tmp_path / FOLDER / f"{stand_in.pid}.json").exists()


def test_an_engine_that_stops_itself_leaves_its_watchdog_nothing_to_end(
    tmp_path: Path, leader: subprocess.Popen[bytes]
) -> None:
    stand_in, dog = engine(tmp_path, leader.pid, "stop")
    stand_in.communicate("\n", timeout=10)
    assert stand_in.returncode == 0
    assert within(2, lambda: not pid_alive(dog))
    time.sleep(0.2)
    assert leader.poll() is None  # (a real engine's ladder ends its servers: here the record's leader lives)


def test_the_watchdog_ignores_what_is_sent_to_the_engine_s_group(
    tmp_path: Path, leader: subprocess.Popen[bytes]
) -> None:
    """A Ctrl-C in a terminal reaches the engine's whole group: the watchdog is in a session of its own
    and ignores SIGINT and SIGHUP anyway."""
    stand_in, dog = engine(tmp_path, leader.pid, "kill")
    assert os.getsid(dog) == dog != os.getsid(stand_in.pid)
    assert within(5, lambda: ignored(dog) >= {signal.SIGINT, signal.SIGHUP})  # (once its Python has started)
    for sent in (signal.SIGINT, signal.SIGHUP):
        os.kill(dog, sent)
    time.sleep(0.2)
    assert pid_alive(dog)
    stand_in.communicate("\n", timeout=10)
    assert within(2, lambda: leader.poll() is not None)


def test_the_frozen_app_runs_the_watchdog_by_its_argument(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert watchdog.command(tmp_path, 42) == [sys.executable, watchdog.ARGUMENT, str(tmp_path), "42"]
    monkeypatch.setattr(sys, "frozen", False)
    assert watchdog.command(tmp_path, 42)[1:3] == ["-m", "mcpmanager.core.system.watchdog"]
    entry = (Path(__file__).resolve().parents[3] / "packaging" / "entry.py").read_text(encoding="utf-8")
    assert "watchdog.ARGUMENT" in entry  # the frozen entry point dispatches it before the CLI loads
