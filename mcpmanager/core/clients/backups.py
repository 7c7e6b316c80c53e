"""Writing what a preview showed, with a timestamped backup beside the file, and finding those backups.

One naming rule for install's and export's backups (and export's records): beside the file, its name,
then `.mcpmanager-` (install) or `.mcpmanager-export-` (export), then the time in UTC,
`<YYYYMMDD-HHMMSS>Z` (no clock change can reorder them), `-2`… when two fall in one second. Names
stamped in this machine's local time, without the `Z`, as install's backups were named before, are
still found and put in order by the instant they name. A file that did not exist gets no backup.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.client_file import read_file
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.system.atomic_write import write_atomic

INSTALL, EXPORT = "mcpmanager", "mcpmanager-export"  # the kinds of backup, as their names say
_STAMP = r"\.{kind}-(\d{{8}}-\d{{6}})(Z?)(?:-(\d+))?{ext}$"


def apply_change(change: Change, now: datetime | None = None) -> Path | None:
    """Write what `change` previewed; the backup made (install), if any. InstallError when the file
    changed since the preview (nothing is written then)."""
    path = unchanged_since_preview(change)
    if not change.changed:
        return None
    backup = None
    if change.action == "install" and change.before is not None:
        backup = free_stem(change.target.path, INSTALL, now or datetime.now(UTC), (".bak",))
        backup = backup.with_name(backup.name + ".bak")  # beside the path the user knows
        write_atomic(backup, change.before, stat.S_IMODE(path.stat().st_mode))
    write_after(change, path)
    return backup


def unchanged_since_preview(change: Change) -> Path:
    """The file written (through a symlink, its target); InstallError if it is not what the preview read."""
    path = Path(os.path.realpath(change.target.path))
    if read_file(path) != change.before:
        raise InstallError(f"{change.target.path} changed since the preview; nothing was written (look again)")
    return path


def write_after(change: Change, path: Path) -> None:
    """The file as the change has it (removed when `after` is None), its mode kept; the backup it
    restored goes (its bytes are the file now: the stack unwinds)."""
    if change.changed:
        mode = stat.S_IMODE(path.stat().st_mode) if change.before is not None else 0o600
        if change.after is None:
            path.unlink()
        else:
            write_atomic(path, change.after, mode)
    if change.restore is not None:
        change.restore.unlink(missing_ok=True)


def list_backups(path: Path) -> list[Path]:
    """install's backups of `path`, newest first."""
    return stamped(path, INSTALL, ".bak")


def stamped(path: Path, kind: str, ext: str) -> list[Path]:
    """The files beside `path` named by the rule above for `kind` and ending in `ext`, newest first."""
    pattern = re.compile(_STAMP.format(kind=re.escape(kind), ext=re.escape(ext)))
    found = []
    for candidate in path.parent.glob(f"{_glob_escape(path.name)}.{kind}-*{ext}"):
        match = pattern.search(candidate.name)
        if match and candidate.name == path.name + match.group(0):
            found.append(((_instant(match.group(1), bool(match.group(2))), int(match.group(3) or 1)), candidate))
    return [candidate for _, candidate in sorted(found, reverse=True)]


def free_stem(path: Path, kind: str, now: datetime, exts: tuple[str, ...]) -> Path:
    """`<name>.<kind>-<stamp>[-N]` beside `path`, with no file of it and any of `exts` there yet."""
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%SZ")
    number = 1
    while True:
        stem = path.with_name(f"{path.name}.{kind}-{stamp}" + (f"-{number}" if number > 1 else ""))
        if not any(stem.with_name(stem.name + ext).exists() for ext in exts):
            return stem
        number += 1


def _instant(stamp: str, utc: bool) -> datetime:
    """A name's time: UTC (`…Z`), or this machine's local time for names stamped before UTC ones."""
    written = datetime.strptime(stamp, "%Y%m%d-%H%M%S")
    return written.replace(tzinfo=UTC) if utc else written.astimezone(UTC)


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)
