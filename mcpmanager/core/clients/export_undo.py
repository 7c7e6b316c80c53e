"""`mcpmanager export --undo`, and the record export leaves beside the client's file to make it exact.

Before the file is changed its bytes are copied beside it as
`<name>.mcpmanager-export-<YYYYMMDD-HHMMSSZ>.bak` (UTC: a clock change cannot reorder them; records
named in local time before are still read; none when export creates the file), and a record
`<name>.mcpmanager-export-<stamp>.json` says what was written: the names, a SHA-256 of each entry
and of the file as export left it. No secret is in it, nor a digest a guess of one could be checked
against: where an entry holds a secret, the record keeps the places (`masked`) and the digests are
taken with the values there masked. These are export's own, apart from install's backups, so
`install --undo` and `export --undo` each unwind their own stack.

Undo takes the newest record: when the file is still exactly what export wrote (its SHA-256), the
backup's bytes come back byte for byte (or the file goes, if export created it), and the backup
and the record go. Otherwise (edited since) only the entries export wrote that are still as it
wrote them are taken out, and those it replaced get their previous text back from the backup,
every other edit kept; the backup stays for the user. The result must read as exactly that
document, or the undo is refused with nothing written.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.backups import EXPORT, free_stem, stamped, unchanged_since_preview, write_after
from mcpmanager.core.clients.change import Change, Target
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.dialects import dialect_of
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.config.secrets import MASK, Masker, mask
from mcpmanager.core.system.atomic_write import write_atomic


@dataclass(frozen=True)
class UndoPlan:
    change: Change
    record: Path | None  # the record this undo consumes


# The record ----------------------------------------------------------------------------------------


KeyPath = list[str | int]  # where a value is in an entry: its keys and list indexes


def secret_paths(entry: Any, literals: Collection[str], at: KeyPath | None = None) -> list[KeyPath]:
    """Where the entry holds a secret: each string showing one by the rule or one of `literals`."""
    at = at or []
    if isinstance(entry, dict):
        return [found for key, value in entry.items() for found in secret_paths(value, literals, [*at, key])]
    if isinstance(entry, list):
        return [found for index, value in enumerate(entry) for found in secret_paths(value, literals, [*at, index])]
    shows = isinstance(entry, str) and (mask(entry) != entry or any(s and s in entry for s in literals))
    return [at] if shows else []


def _at(entry: Any, path: KeyPath) -> tuple[Any, bool]:
    """The value at `path` in `entry`, and whether there is one."""
    for part in path:
        keyed = isinstance(entry, dict) and isinstance(part, str) and part in entry
        if not keyed and not (isinstance(entry, list) and isinstance(part, int) and 0 <= part < len(entry)):
            return None, False
        entry = entry[part]
    return entry, True


def _masked(entry: Any, paths: Collection[KeyPath]) -> Any:
    """The entry with a mask for each string at `paths` (those there still)."""
    found = copy.deepcopy(entry)
    for path in paths:
        parent, there = _at(found, path[:-1])
        if path and there and isinstance(_at(parent, path[-1:])[0], str):
            parent[path[-1]] = MASK
    return found


def digest(value: Any, paths: Collection[KeyPath] = ()) -> str:
    """An entry's fingerprint, its secrets (at `paths`) masked: tells whether it is still as export
    wrote it, and lets no one check a guess of a secret against the record."""
    shown = _masked(value, paths)
    return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def file_digest(data: bytes, entries: dict[str, Any], masked: dict[str, list[KeyPath]]) -> str:
    """The file's fingerprint: with secrets in export's entries, its text masked the same way
    (`masked`, the secrets' places, names the values in the file: no value is kept)."""
    values = [_at(entries.get(name), path)[0] for name, paths in masked.items() for path in paths]
    literals = [value for value in values if isinstance(value, str) and value]
    if not literals:
        return hashlib.sha256(data).hexdigest()
    text = Masker(literals)(data.decode("utf-8", "surrogateescape"))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def write_record(
    path: Path,
    before: bytes | None,
    after: bytes,
    written: dict[str, Any],
    replaced: tuple[str, ...],
    now: datetime,
    masked: dict[str, list[KeyPath]] | None = None,
) -> Path | None:
    """The backup of `before` (if the file was there) and the record of what export wrote, beside
    `path`; the backup made. `masked`: where the entries hold secrets (`secret_paths`)."""
    masked = {name: paths for name, paths in (masked or {}).items() if paths}
    stem = free_stem(path, EXPORT, now, (".bak", ".json"))
    backup = stem.with_name(stem.name + ".bak") if before is not None else None
    if backup is not None:
        mode = stat.S_IMODE(Path(os.path.realpath(path)).stat().st_mode)
        write_atomic(backup, before or b"", mode)
    record = {
        "backup": backup.name if backup is not None else None,
        "after": file_digest(after, written, masked),
        "written": {name: digest(entry, masked.get(name, ())) for name, entry in written.items()},
        "replaced": list(replaced),
        "masked": masked,
    }
    write_atomic(stem.with_name(stem.name + ".json"), (json.dumps(record, indent=2) + "\n").encode("utf-8"), 0o600)
    return backup


def list_records(path: Path) -> list[Path]:
    """export's records for `path`, newest first."""
    return stamped(path, EXPORT, ".json")


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
        masked: dict[str, list[KeyPath]] = dict(record.get("masked") or {})  # none in records before masking
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise InstallError(f"{record_path}: not a record mcpmanager's export wrote; nothing undone") from None
    if before is None:
        note = f"{target.path} does not exist: nothing to undo"
        return UndoPlan(Change(target, "export-undo", None, None, notes=(note,)), record_path)
    original = read_file(backup) if backup is not None else None
    now = dialect_of(target.layout).entries(decode(before, target.path), target) if masked else {}
    if file_digest(before, now, masked) == after_digest:
        if backup is None:
            note = f"{target.path} was created by mcpmanager's export: undo removes it"
            return UndoPlan(Change(target, "export-undo", before, None, notes=(note,)), record_path)
        if original is not None:
            return UndoPlan(Change(target, "export-undo", before, original, restore=backup), record_path)
    return UndoPlan(_surgical(target, before, (written, masked), replaced, backup, original), record_path)


def _surgical(
    target: Target,
    before: bytes,
    record: tuple[dict[str, str], dict[str, list[KeyPath]]],
    replaced: list[str],
    backup: Path | None,
    original: bytes | None,
) -> Change:
    """The file was edited since the export: take out only what export wrote, as it wrote it."""
    written, masked = record
    text = decode(before, target.path)
    now = dialect_of(target.layout).entries(text, target)
    old = decode(original, target.path) if original is not None else None
    old_entries = dialect_of(target.layout).entries(old, target) if old is not None else {}
    out, put_back, values, notes = [], {}, {}, []
    for name, fingerprint in written.items():
        if name not in now:
            continue
        if digest(now[name], masked.get(name, ())) != fingerprint:
            notes.append(f"{name} was changed in {target.path} since the export: kept")
            continue
        out.append(name)
        if name in replaced:
            previous = None
            if old is not None:
                previous = dialect_of(target.layout).entry_text(old, target, name)
            if previous is None or name not in old_entries:
                notes.append(f"{name}: what export replaced is not in a backup any more: removed, not put back")
            else:
                put_back[name], values[name] = previous, old_entries[name]
    try:
        after = dialect_of(target.layout).without(text, target, out, {n: (t, values[n]) for n, t in put_back.items()})
    except InstallError as exc:
        kept_in = f" (the file as it was before the export is in {backup})" if original is not None else ""
        raise InstallError(f"{exc}{kept_in}") from None
    lead = f"{target.path} was edited since the export: your edits are kept, only what export wrote is undone"
    kept = [f"the file as it was before the export is kept in {backup}"] if original is not None else []
    return Change(
        target, "export-undo", before, after.encode("utf-8"), moved=tuple(out), exact=False, notes=(lead, *notes, *kept)
    )


def apply_export_undo(plan: UndoPlan) -> None:
    """Write what the undo previewed; its record (and, restored byte for byte, its backup) goes."""
    write_after(plan.change, unchanged_since_preview(plan.change))
    if plan.record is not None:
        plan.record.unlink(missing_ok=True)
