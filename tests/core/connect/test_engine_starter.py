"""Finding or starting the engine `connect` relays to, around another process's engine lock: one
that holds it and has not advertised yet is starting (waited for), or stopping (it withdraws its
advertisement before its exit lets go of the lock: the next engine is started then). The start
itself is replaced here by one that advertises this process at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.connect import engine_starter
from mcpmanager.core.connect.engine_starter import find_or_start
from mcpmanager.core.connect.relay import NoEngine
from mcpmanager.core.engine.advertisement import write_advertisement
from mcpmanager.core.engine.single_instance import engine_lock
from mcpmanager.core.system.file_lock import FileLock
from mcpmanager.core.system.paths import Paths

BUDGET = 5.0  # seconds find_or_start may wait; the cases below take a fraction of it


def advertise(paths: Paths, name: str) -> None:
    """An HTTP engine's advertisement, as this (live) process's."""
    token = paths.runtime_dir / "token"
    token.write_text("a-token", encoding="ascii")
    write_advertisement(paths.runtime_dir, {"endpoint": f"http://127.0.0.1:9/{name}", "token_file": str(token)})


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    paths.ensure()
    return paths


@pytest.fixture
def starts(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each engine was started (it advertises at once)."""
    started: list[float] = []

    def start(started_paths: Paths, command: list[str] | None = None) -> Any:
        started.append(time.monotonic())
        advertise(started_paths, "started")

    monkeypatch.setattr(engine_starter, "start_in_background", start)
    return started


def held_by_another(paths: Paths, seconds: float) -> threading.Thread:
    """The engine lock held as another engine's (a lock of its own open file) for `seconds`."""
    lock = FileLock(paths.runtime_dir, engine_lock(paths.runtime_dir).path.name)
    assert lock.acquire()

    def hold() -> None:
        time.sleep(seconds)
        lock.release()

    holder = threading.Thread(target=hold)
    holder.start()
    return holder


def test_with_no_engine_one_is_started(paths: Paths, starts: list[float]) -> None:
    assert find_or_start(paths, BUDGET)["endpoint"].endswith("/started")
    assert len(starts) == 1


def test_an_engine_that_holds_the_lock_and_advertises_later_is_waited_for_not_started_beside(
    paths: Paths, starts: list[float]
) -> None:
    holder = held_by_another(paths, 2.0)
    timer = threading.Timer(0.3, advertise, (paths, "starting"))
    timer.start()
    try:
        assert find_or_start(paths, BUDGET)["endpoint"].endswith("/starting")
        assert starts == []
    finally:
        timer.join()
        holder.join()


def test_an_engine_that_withdrew_its_advertisement_and_still_exits_is_followed_by_a_new_one(
    paths: Paths, starts: list[float]
) -> None:
    """The engine `connect` relayed to stops: no advertisement, the lock still held until it exits.
    The next one is started once that lock is let go, well within the budget (it was waited for
    as a starting engine until the budget ran out, and `connect` ended)."""
    holder = held_by_another(paths, 0.5)
    try:
        began = time.monotonic()
        assert find_or_start(paths, BUDGET)["endpoint"].endswith("/started")
        assert len(starts) == 1 and starts[0] - began >= 0.4  # not beside the one still exiting
        assert time.monotonic() - began < BUDGET / 2
    finally:
        holder.join()


def test_an_engine_started_here_that_never_advertises_is_not_started_again(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Paths] = []
    monkeypatch.setattr(engine_starter, "start_in_background", lambda p, command=None: started.append(p))
    with pytest.raises(NoEngine, match="no mcpmanager engine came up within 1 s"):
        find_or_start(paths, 1.0)
    assert len(started) == 1
