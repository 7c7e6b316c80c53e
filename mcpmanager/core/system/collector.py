"""A process's big imports (the SDK, Qt) with the garbage collector paused. Woken every few hundred
new objects, it scanned the growing heap again and again while they loaded: a fifth of the CPU time
of `serve`'s imports and of the window's. What they leave is frozen after (modules, classes,
schemas: they live as long as the process), so that no later collection scans it either."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()
