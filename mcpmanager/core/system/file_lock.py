"""An exclusive lock on a file, held until released or until the process ends, however it ends.

`flock` on POSIX, one locked byte on Windows: the kernel drops the lock with the process, so a crash
never leaves a stale claim.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import IO

if sys.platform != "win32":
    import fcntl

    def _try_lock(handle: IO[str], blocking: bool) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

else:  # Windows: one byte locked; the OS releases it with the process too
    import msvcrt

    def _try_lock(handle: IO[str], blocking: bool) -> bool:
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True


class FileLock:
    """An exclusive lock on a file of the runtime directory, held until `release` (or exit)."""

    def __init__(self, runtime_dir: Path, name: str) -> None:
        runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = runtime_dir / name
        self._handle: IO[str] | None = None

    def acquire(self, blocking: bool = False) -> bool:
        handle = self.path.open("a+", encoding="ascii")
        if not _try_lock(handle, blocking):
            handle.close()
            return False
        self._handle = handle
        return True

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing drops the lock
            self._handle = None

    def __enter__(self) -> FileLock:
        self.acquire(blocking=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
