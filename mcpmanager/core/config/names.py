"""Server names: the ones mcpmanager gives, and a free one when a name is taken."""

from __future__ import annotations

import re
from collections.abc import Collection

# The names mcpmanager gives servers it adds (the window, imports): safe in exposed tool names
# (`<server>__<tool>`), file names and menus. A config file may hold others; they are kept.
SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_OUTSIDE = re.compile(r"[^A-Za-z0-9_.-]+")


def free_name(name: str, taken: Collection[str]) -> str:
    """`name`, or the first of `name-2`, `name-3`… that is not taken."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


def usable_name(name: str, taken: Collection[str]) -> str:
    """`name` made one mcpmanager gives (`SERVER_NAME`; other characters become `-`), and free."""
    return free_name(_OUTSIDE.sub("-", name).strip("-_.") or "server", taken)
