"""`mcpmanager export --undo`, and the record export leaves beside the client's file to make it exact.

Before the file is changed its bytes are copied beside it as
`<name>.mcpmanager-export-<YYYYMMDD-HHMMSS>.bak` (none when export creates the file), and a record
`<name>.mcpmanager-export-<stamp>.json` says what was written: the names, a SHA-256 of each entry
and of the file as export left it (no secret in it). These are export's own, apart from install's
backups, so `install --undo` and `export --undo` each unwind their own stack.

Undo takes the newest record: when the file is still exactly what export wrote (its SHA-256), the
backup's bytes come back byte for byte (or the file goes, if export created it), and the backup
and the record go. Otherwise (edited since) only the entries export wrote that are still as it
wrote them are taken out, and those it replaced get their previous text back from the backup,
every other edit kept; the backup stays for the user.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import export_formats
from mcpmanager.core.clients.change import Change, Target
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.system.atomic_write import write_atomic

_RECORD = re.compile(r"\.mcpmanager-export-(\d{8}-\d{6})(?:-(\d+))?\.json$")


@dataclass(frozen=True)
class UndoPlan:
    change: Change
    record: Path | None  # the record this undo consumes


# The record ----------------------------------------------------------------------------------------


def digest(value: Any) -> str:
    """An entry's fingerprint: tells whether it is still as export wrote it, holding no secret."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def write_record(
    path: Path, before: bytes | None, after: bytes, written: dict[str, Any], replaced: tuple[str, ...], now: datetime
) -> Path | None:
    """The backup of `before` (if the file was there) and the record of what export wrote, beside
    `path`; the backup made."""
    stem = free_stem(path, now)
    backup = stem.with_name(stem.name + ".bak") if before is not None else None
    if backup is not None:
        mode = stat.S_IMODE(Path(os.path.realpath(path)).stat().st_mode)
        write_atomic(backup, before or b"", mode)
    record = {
        "backup": backup.name if backup is not None else None,
        "after": hashlib.sha256(after).hexdigest(),
        "written": {name: digest(entry) for name, entry in written.items()},
        "replaced": list(replaced),
    }
    write_atomic(stem.with_name(stem.name + ".json"), (json.dumps(record, indent=2) + "\n").encode("utf-8"), 0o600)
    return backup


def free_stem(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d-%H%M%S")
    number = 1
    while True:
        stem = path.with_name(f"{path.name}.mcpmanager-export-{stamp}" + (f"-{number}" if number > 1 else ""))
        if not any(stem.with_name(stem.name + ext).exists() for ext in (".bak", ".json")):
            return stem
        number += 1


def list_records(path: Path) -> list[Path]:
    """export's records for `path`, newest first."""
    found = []
    escaped = re.sub(r"([*?\[])", r"[\1]", path.name)
    for candidate in path.parent.glob(f"{escaped}.mcpmanager-export-*.json"):
        match = _RECORD.search(candidate.name)
        if match and candidate.name == path.name + match.group(0):
            found.append(((match.group(1), int(match.group(2) or 1)), candidate))
    return [candidate for _, candidate in sorted(found, reverse=True)]


# Undo ----------------------------------------------------------------------------------------------


def plan_export_undo(target: Target) -> UndoPlan:
    """What undoing the last export into `target` would write (see the module docstring); reads only."""
    records = list_records(target.path)
    before = read_file(target.path)
    if not records:
        note = f"mcpmanager has not exported to {target.path} (no record of it): nothing to undo"
        return UndoPlan(Change(target, "export-undo", before, before, notes=(note,)), None)
    record_path = records[0]
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        written: dict[str, str] = dict(record["written"])
        replaced: list[str] = list(record["replaced"])
        backup = record_path.with_name(record["backup"]) if record["backup"] else None
        after_digest = str(record["after"])
    except (OSError, ValueError, KeyError, TypeError):
        raise InstallError(f"{record_path}: not a record mcpmanager's export wrote; nothing undone") from None
    if before is None:
        note = f"{target.path} does not exist: nothing to undo"
        return UndoPlan(Change(target, "export-undo", None, None, notes=(note,)), record_path)
    original = read_file(backup) if backup is not None else None
    if hashlib.sha256(before).hexdigest() == after_digest:
        if backup is None:
            note = f"{target.path} was created by mcpmanager's export: undo removes it"
            return UndoPlan(Change(target, "export-undo", before, None, notes=(note,)), record_path)
        if original is not None:
            return UndoPlan(Change(target, "export-undo", before, original, restore=backup), record_path)
    return UndoPlan(_surgical(target, before, written, replaced, backup, original), record_path)


def _surgical(
    target: Target,
    before: bytes,
    written: dict[str, str],
    replaced: list[str],
    backup: Path | None,
    original: bytes | None,
) -> Change:
    """The file was edited since the export: take out only what export wrote, as it wrote it."""
    text = decode(before, target.path)
    now = export_formats.current(text, target)
    old = decode(original, target.path) if original is not None else None
    out, put_back, notes = [], {}, []
    for name, fingerprint in written.items():
        if name not in now:
            continue
        if digest(now[name]) != fingerprint:
            notes.append(f"{name} was changed in {target.path} since the export: kept")
            continue
        out.append(name)
        if name in replaced:
            previous = None
            if old is not None:
                previous = export_formats.entry_text(old, target, name)
            if previous is None:
                notes.append(f"{name}: what export replaced is not in a backup any more: removed, not put back")
            else:
                put_back[name] = previous
    after = export_formats.without(text, target, out, put_back)
    lead = f"{target.path} was edited since the export: your edits are kept, only what export wrote is undone"
    kept = [f"the file as it was before the export is kept in {backup}"] if original is not None else []
    return Change(
        target, "export-undo", before, after.encode("utf-8"), moved=tuple(out), exact=False, notes=(lead, *notes, *kept)
    )


def apply_export_undo(plan: UndoPlan) -> None:
    """Write what the undo previewed; its record (and, restored byte for byte, its backup) goes."""
    change = plan.change
    path = Path(os.path.realpath(change.target.path))
    if read_file(path) != change.before:
        raise InstallError(f"{change.target.path} changed since the preview; nothing was written (look again)")
    if change.changed:
        mode = stat.S_IMODE(path.stat().st_mode)
        if change.after is None:
            path.unlink()
        else:
            write_atomic(path, change.after, mode)
    if change.restore is not None:
        change.restore.unlink(missing_ok=True)  # its bytes are the file now: the stack unwinds
    if plan.record is not None:
        plan.record.unlink(missing_ok=True)
