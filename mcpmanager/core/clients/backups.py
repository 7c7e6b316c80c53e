"""Writing what a preview showed, with a timestamped backup beside the file, and finding those backups.

Before a file is changed, its bytes are copied next to it as `<name>.mcpmanager-<YYYYMMDD-HHMMSS>.bak`
(`-2`… when two fall in one second). A file that did not exist gets no backup.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime
from pathlib import Path

from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.client_file import read_file
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.system.atomic_write import write_atomic

_BACKUP = re.compile(r"\.mcpmanager-(\d{8}-\d{6})(?:-(\d+))?\.bak$")


def apply_change(change: Change, now: datetime | None = None) -> Path | None:
    """Write what `change` previewed; the backup made (install), if any. InstallError when the file
    changed since the preview (nothing is written then)."""
    path = Path(os.path.realpath(change.target.path))
    if read_file(path) != change.before:
        raise InstallError(f"{change.target.path} changed since the preview; nothing was written (look again)")
    if not change.changed:
        return None
    mode = stat.S_IMODE(path.stat().st_mode) if change.before is not None else 0o600
    backup = None
    if change.action == "install" and change.before is not None:
        backup = _backup_path(change.target.path, now or datetime.now())  # beside the path the user knows
        write_atomic(backup, change.before, mode)
    if change.after is None:
        path.unlink()
    else:
        write_atomic(path, change.after, mode)
    if change.restore is not None:
        change.restore.unlink(missing_ok=True)  # its bytes are the file now: the stack unwinds
    return backup


def list_backups(path: Path) -> list[Path]:
    """mcpmanager's backups of `path`, newest first."""
    found = []
    for candidate in path.parent.glob(f"{_glob_escape(path.name)}.mcpmanager-*.bak"):
        match = _BACKUP.search(candidate.name)
        if match and candidate.name == path.name + match.group(0):
            found.append(((match.group(1), int(match.group(2) or 1)), candidate))
    return [candidate for _, candidate in sorted(found, reverse=True)]


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _backup_path(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d-%H%M%S")
    candidate, number = path.with_name(f"{path.name}.mcpmanager-{stamp}.bak"), 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.mcpmanager-{stamp}-{number}.bak")
    return candidate
