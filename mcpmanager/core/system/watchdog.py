"""A watchdog that outlives the engine by moments: when the engine ends, however it ends (`kill -9`,
a crash, the window killed), it ends every process group the engine had on record, then exits.

The engine starts it with its first server (`ProcessGroups.add`, given `start_watchdog`: an
engine that runs no stdio server leaves it nothing to do), holding the only write end of a pipe
whose read end is the watchdog's stdin. The kernel closes that end when the engine's process goes,
and the watchdog's read returns at once: no polling, no signal to miss. The write end is
close-on-exec (as every descriptor Python opens), so no server holds it and keeps the pipe open. The watchdog runs in a
session of its own, ignoring SIGINT and SIGHUP, so whatever signals the engine's group (a Ctrl-C
in a terminal, a client ending what it started) does not take the watchdog along before its work;
its stdout and stderr are /dev/null, so it holds none of a client's pipes.

What it ends is the engine's record in the runtime folder (`process_groups`), read when the pipe
closes with nothing written: every session there, grandchildren included, SIGKILLed, the record
dropped, and the engine's advertisement removed (readers skip a dead engine's, but a reused pid
would make it look alive). An engine that stops on its own ends its servers by the stop ladder and writes `DONE`
before closing the pipe: the watchdog then exits without a sweep. The next engine's sweep at start
stays as the second line (for a watchdog killed along with the engine, a machine that lost power).

It imports nothing but the standard library and `process_groups` (its cost: docs/supervision.md).
Windows has no process groups and no watchdog (`start_watchdog` gives None there): its servers are
put in a job object instead (`windows_job`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from mcpmanager.core.system.process_groups import end_recorded, start_ticks

ARGUMENT = "_watchdog"  # the frozen app's first argument that runs `main` (packaging/entry.py)
DONE = b"done"  # what an engine that stopped on its own writes before closing the pipe


class Watchdog:
    """The engine's side: the pipe's write end, and the watchdog process to reap at the end."""

    def __init__(self, process: subprocess.Popen[bytes], write_end: int) -> None:
        self.process = process
        # A file object, so that an engine dropped without `done` closes it when collected: the
        # watchdog then takes the engine for gone, and ends what it left on record.
        self._pipe: BinaryIO | None = os.fdopen(write_end, "wb", buffering=0)

    def done(self) -> None:
        """The engine stopped its servers itself: the watchdog exits without a sweep (another engine
        of this process may share the record's name), and is reaped (it exits at once: a moment)."""
        if self._pipe is None:
            return
        with contextlib.suppress(OSError):  # (a watchdog gone already: nothing to tell)
            self._pipe.write(DONE)
        self._pipe.close()
        self._pipe = None
        with contextlib.suppress(subprocess.TimeoutExpired):  # (else `subprocess` reaps it later)
            self.process.wait(timeout=2)


def command(runtime_dir: Path, engine: int, leftovers: Sequence[Path] = ()) -> list[str]:
    """The watchdog's command line: this interpreter and module, or the frozen app with `ARGUMENT`."""
    arguments = [str(runtime_dir), str(engine), *map(str, leftovers)]
    if getattr(sys, "frozen", False):
        return [sys.executable, ARGUMENT, *arguments]
    return [sys.executable, "-m", __name__, *arguments]


def start_watchdog(runtime_dir: Path, leftovers: Sequence[Path] = ()) -> Watchdog | None:
    """Start this engine's watchdog (None on Windows); `leftovers`: files of the engine's that say it
    runs (its advertisement), removed with its servers should it be killed. OSError when it cannot
    start (a full process table): the caller says so and runs without it."""
    if sys.platform == "win32":
        return None
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            command(runtime_dir, os.getpid(), leftovers),
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return Watchdog(process, write_end)


def main(argv: Sequence[str]) -> int:
    """Wait for the engine's end: the pipe on stdin closing with nothing written (the engine is gone:
    end what it had on record), or with `DONE` (it stopped its servers itself: nothing to do)."""
    for name in ("SIGINT", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    runtime_dir, engine = Path(argv[0]), int(argv[1])
    ticks = start_ticks(engine)  # (read while the engine lives: its record is told from a successor's)
    told = b""
    while True:
        try:
            chunk = os.read(0, 4096)
        except OSError:
            break
        if not chunk:
            break
        told += chunk
    if told != DONE:
        end_recorded(runtime_dir, engine, ticks)
        for leftover in argv[2:]:  # (so that nobody reads the dead engine as running)
            with contextlib.suppress(OSError):
                os.unlink(leftover)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
