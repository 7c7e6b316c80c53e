"""The process groups an engine's servers run in, recorded so that nothing outlives a killed engine.

Each stdio server is spawned in a session of its own (its pid is its group and session id), so one
signal reaches every grandchild `npx` or `uvx` started. A stopping engine ends those groups itself
(the stop ladder). An engine that is killed (`kill -9`, a crash, a client's SIGKILL after its grace
ran out) cannot: servers that ignore the end of their stdin, and grandchildren, would run on with
parent 1. So each engine keeps a record of its live groups in the runtime folder
(`groups/<engine pid>.json`); its watchdog ends them the moment the engine is gone (`watchdog`), and
every engine, at start, ends the groups recorded by engines that are gone, then drops their records.

A group is identified by its leader's pid and start time (clock ticks since boot, from /proc on
Linux): a member of the recorded session that started before its leader is another process that
reuses the number, and is left alone. Where there is no /proc (macOS), the group is signalled as a
whole while it exists; pids are not reused there until they wrap. A parent-death signal would
cover only the direct child (it is not inherited by grandchildren) and needs a pre-exec hook that
is unsafe in a threaded process, so the record is what both the watchdog and the sweep read.

Windows has neither process groups nor the watchdog: there each server is put in the engine's job
object instead, which the kernel ends with the engine (`windows_job`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from mcpmanager.core.system.atomic_write import write_atomic

if TYPE_CHECKING:
    from mcpmanager.core.system.windows_job import WindowsJob

logger = logging.getLogger(__name__)

FOLDER = "groups"
_PROC = Path("/proc")


def start_ticks(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot), or None where that is not known (no /proc, gone)."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command's name (which may hold spaces): field 3 onwards."""
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def pid_exists(pid: int) -> bool:
    """A process of that number exists (one of another user's counts: it is not ours to signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive(pid: int, ticks: int | None) -> bool:
    """The process that started at `ticks` (when known) is still running: not gone, not a zombie."""
    if not pid_exists(pid):
        return False
    fields = _stat(pid)
    if fields is not None and fields[0] == "Z":
        return False
    return ticks is None or start_ticks(pid) == ticks


class Watch(Protocol):
    """A watchdog, as the record sees it (`watchdog.Watchdog`)."""

    def done(self) -> None: ...


class ProcessGroups:
    """This engine's record of its servers' live process groups (None folder: nothing recorded).

    `watchdog`: what starts a watchdog over the record with the first group (`watchdog.start_watchdog`,
    given by the engine: the watchdog reads this module), None for none. `job`: the job object its
    servers are put in instead of a watchdog's care (Windows' own when None there; none elsewhere)."""

    def __init__(
        self,
        runtime_dir: Path | None,
        watchdog: Callable[[Path], Watch | None] | None = None,
        job: WindowsJob | None = None,
    ) -> None:
        self._runtime_dir = runtime_dir
        self.path = runtime_dir / FOLDER / f"{os.getpid()}.json" if runtime_dir is not None else None
        self._engine_ticks = start_ticks(os.getpid())
        self._groups: dict[int, int | None] = {}  # leader pid → its start ticks
        self._ended = False  # `kill_all` ran: whatever starts after it is ended as it starts
        self._start_watchdog = watchdog
        self._watchdog: Watch | Literal[False] | None = None  # started with the first group; False: none
        if job is None and sys.platform == "win32":
            # (imported here: ctypes is no part of the watchdog's start, which imports this module)
            from mcpmanager.core.system.windows_job import WindowsJob

            job = WindowsJob()
        self._job = job

    def add(self, pid: int) -> None:
        self._groups[pid] = start_ticks(pid)
        self._write()
        start = self._start_watchdog
        if self._job is not None:  # (it never raises: a server that cannot join runs as it would without)
            self._job.assign(pid)
        elif start is not None and self._runtime_dir is not None and self._watchdog is None and not self._ended:
            try:
                self._watchdog = start(self._runtime_dir) or False
            except OSError as exc:  # (the next engine's sweep is then the only line)
                logger.warning("cannot start the watchdog for a killed engine's servers: %s", exc)
                self._watchdog = False
        if self._ended:  # (a server restarted by its supervisor before the engine's stop reached it)
            _kill_session(pid, self._groups[pid])

    def remove(self, pid: int) -> None:
        if pid in self._groups:
            del self._groups[pid]
            self._write()

    def close(self) -> None:
        """The engine stopped its servers itself: its watchdog has nothing to do, and goes; its job
        is closed, ending what is left in it."""
        if self._watchdog:
            self._watchdog.done()
        if self._job is not None:
            self._job.close()

    def kill_all(self) -> None:
        """SIGKILL every live group at once, and any started later: the end of the stop ladder, for
        a second SIGTERM."""
        self._ended = True
        for pid, ticks in list(self._groups.items()):
            _kill_session(pid, ticks)

    def _write(self) -> None:
        if self.path is None:
            return
        try:
            if not self._groups:
                self.path.unlink(missing_ok=True)
                return
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            record = {"engine": os.getpid(), "engine_ticks": self._engine_ticks, "groups": self._groups}
            write_atomic(self.path, json.dumps(record).encode(), 0o600)
        except OSError as exc:  # a full disk must not stop a server from starting; only this record is lost
            logger.warning("cannot record the servers' process groups in %s: %s", self.path, exc)


def reap_left_behind(runtime_dir: Path) -> int:
    """End the process groups recorded by engines that are gone; the number of processes ended."""
    ended = 0
    folder = runtime_dir / FOLDER
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = _read(path)
        if record is None:
            continue
        engine, engine_ticks, groups = record
        if engine == os.getpid() or _alive(engine, engine_ticks):
            continue  # a running engine's own servers
        ended += _end(path, engine, groups)
    return ended


def end_recorded(runtime_dir: Path, engine: int, engine_ticks: int | None) -> int:
    """End the process groups the engine `engine` (started at `engine_ticks`) recorded, whether or
    not it has finished exiting (its watchdog knows it is gone), and drop the record; the number of
    processes ended. A record of another engine that reuses the number is left alone."""
    path = runtime_dir / FOLDER / f"{engine}.json"
    record = _read(path) if path.exists() else None
    if record is None or record[0] != engine:
        return 0
    if None not in (engine_ticks, record[1]) and record[1] != engine_ticks:
        return 0
    return _end(path, engine, record[2])


def _read(path: Path) -> tuple[int, int | None, dict[int, int | None]] | None:
    """A record's engine, its start ticks and its groups; None (and the file dropped) if unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        engine, engine_ticks = int(record["engine"]), record.get("engine_ticks")
        groups = {int(pid): ticks for pid, ticks in dict(record["groups"]).items()}
        if not all(ticks is None or type(ticks) is int for ticks in groups.values()):
            raise ValueError("a start time that is not a number")
    except FileNotFoundError:
        return None  # (dropped meanwhile: by its engine, or by another sweep)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("ignoring an unreadable process-group record %s: %s", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return engine, engine_ticks if isinstance(engine_ticks, int) else None, groups


def _end(path: Path, engine: int, groups: dict[int, int | None]) -> int:
    ended = sum(_kill_session(pid, ticks) for pid, ticks in groups.items())
    with contextlib.suppress(OSError):
        path.unlink()
    if ended:
        logger.warning("ended %d server process(es) left running by a killed engine (pid %d)", ended, engine)
    return ended


def _kill_session(leader: int, ticks: int | None) -> int:
    """SIGKILL the processes of the session `leader` started (its group, and members that moved to
    another group of it); the number signalled."""
    if sys.platform == "win32":  # pragma: no cover - no process groups there
        return 0
    if not _PROC.is_dir():  # macOS: the group as a whole, while it exists
        try:
            os.killpg(leader, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return 0
        return 1
    signalled = 0
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        # fields: [state, ppid, pgrp, session, ...]; a session id is its leader's pid.
        if fields is None or fields[0] == "Z" or int(fields[3]) != leader:
            continue
        if ticks is not None and int(fields[19]) < ticks:
            continue  # started before the leader: not of its session, a reused number
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(entry.name), signal.SIGKILL)
            signalled += 1
    return signalled
