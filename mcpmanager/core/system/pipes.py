"""Our own stdin and stdout on the event loop, when they can be."""

from __future__ import annotations

import os
import stat


def pollable(fd: int) -> bool:
    """A pipe or a socket: attachable to the event loop as it is.

    A terminal could be too, but the loop would set its shared file description non-blocking, and
    the shell that owns the terminal would then read errors after we exit; a regular file cannot be
    polled at all. Those are read through a worker thread instead (someone trying it by hand)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
