"""Whether a window could be shown on this machine now."""

from __future__ import annotations

import os
import sys


def has_display() -> bool:
    """Clients often start `connect` with a minimal environment (no DISPLAY): the headless engine
    then serves, and the window takes over when it is opened."""
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
