"""Makes concurrent config writers race for certain: every read of the config (`parse_config`, which
every reader of the file goes through) waits, on its process's first read, until all the racing
writers have arrived, then each read lingers `DELAY` s before it returns. Without a lock every writer
reads the same file and saves over the others'; with one they take turns.

Run as `python -c "import tests.helpers.racing_writer as r; r.main()" BARRIER N -- ARGS…` (from the
repository's root) for `python -m mcpmanager ARGS…` racing; `arm(BARRIER, N)` in this process.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from mcpmanager.core.config import load
from mcpmanager.core.config.model import Config

DELAY = 0.25
ARRIVAL_TIMEOUT = 30.0


def arm(barrier: Path, writers: int) -> None:
    """Patch this process's config reads (see the module's docstring)."""
    load.parse_config = racing(barrier, writers)  # type: ignore[assignment]


def racing(barrier: Path, writers: int) -> Callable[[str, str], Config]:
    """`parse_config` made to race (see the module's docstring)."""
    original = load.parse_config
    calls = 0

    def racing(text: str, source: str) -> Config:
        nonlocal calls
        calls += 1
        if calls == 1:
            _arrive(barrier, writers)
        config = original(text, source)
        time.sleep(DELAY)
        return config

    return racing


def _arrive(barrier: Path, writers: int) -> None:
    barrier.mkdir(parents=True, exist_ok=True)
    (barrier / f"{os.getpid()}-{uuid.uuid4().hex}").touch()
    deadline = time.monotonic() + ARRIVAL_TIMEOUT
    while len(list(barrier.iterdir())) < writers:
        if time.monotonic() > deadline:
            raise SystemExit(f"racing_writer: only {len(list(barrier.iterdir()))} of {writers} writers arrived")
        time.sleep(0.005)


def main() -> None:
    barrier, writers, separator, *args = sys.argv[1:]
    assert separator == "--", "usage: BARRIER N -- ARGS…"
    arm(Path(barrier), int(writers))
    from mcpmanager.cli import main as mcpmanager_main

    sys.argv = ["mcpmanager", *args]
    raise SystemExit(mcpmanager_main())
