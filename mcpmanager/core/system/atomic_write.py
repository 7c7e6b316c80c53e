"""Writing a file so that a crash leaves the old bytes or the new ones, never a mix: the user's
config and their clients' configs are written this way."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(
    path: Path, data: bytes, mode: int, durable: bool = True, before_replace: Callable[[], None] | None = None
) -> None:
    """`data` into `path` with permission bits `mode`: a temporary file beside it, flushed to disk,
    then renamed over it (and the rename made durable on POSIX). `durable=False` skips the syncs,
    for files rewritten often whose loss costs nothing (the advertisement, the cache); a failed write
    (a full disk) leaves no temporary file behind either way. `before_replace` runs at the last moment
    before the rename; what it raises leaves `path` as it was."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            if durable:
                os.fsync(file.fileno())
        os.chmod(temp, mode)
        if before_replace is not None:
            before_replace()
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable and os.name == "posix":
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
