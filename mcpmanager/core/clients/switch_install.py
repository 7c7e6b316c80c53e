"""Install and undo for the JSON clients whose own per-server switch turns what mcpmanager serves
off: Zed (`"enabled": false` in `context_servers.NAME`) and Cline (`"disabled": true` in
`mcpServers.NAME`); each client's module says why its switch is the one to use (`zed`, `cline`).

- Install writes mcpmanager's entry into the servers object (made if missing) and, with
  `--disable-served`, the switch into each served server that is on: the key's value replaced
  where the entry has it (`"enabled": true`, `"disabled": false`), else a member added after the
  entry's last one. The text is edited in place (`json_edit`): every other byte stays.
- Nothing else is written into the client's file: which servers mcpmanager turned off is read from
  the newest backup, the file as it was before the install (on there, off now).
- Undo: the newest backup's bytes come back when installing onto it, turning off those same
  servers, gives the file as it is now; otherwise (the file was edited since, as Zed does when its
  own settings change) mcpmanager's entry is removed and each of those servers gets its switch back
  as the backup has it (the key's old value, or no key); the backup stays for the user.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import cline, zed
from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.change import Change, InstalledMode, Layout, Target, TargetState
from mcpmanager.core.clients.client_file import decode, object_at, parse, read_file
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import BRIDGE_NAME, read_entries, served_by
from mcpmanager.core.clients.json_edit import JsonText
from mcpmanager.core.config.json_text import KeyPath
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import Mode

# layout → (its servers object, the switch's key, the value that turns a server off)
SWITCHES: dict[str, tuple[KeyPath, str, bool]] = {
    "zed": (zed.SECTION, *zed.SWITCH),
    "cline": (cline.SECTION, *cline.SWITCH),
}


def plan_install(
    target: Target,
    entry: dict[str, Any],
    mode: Mode | None,
    *,
    config: Config | None,
    disable_served: bool,
    home: Path | None,
) -> Change:
    before = read_file(target.path)
    text = decode(before, target.path) if before is not None else None
    doc = parse(text, target.path)
    served = tuple(_served(doc, target.layout, config, home)) if config is not None else ()
    after = installed(text, target, entry, served if disable_served else ())
    return Change.install(target, before, after, mode, served, disable_served)


def installed(text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[str]) -> str:
    """`text` with mcpmanager's entry and the switch off in each of `disable`. Deterministic: undo
    redoes it on the backup to tell whether the file was edited since."""
    section, key, off = SWITCHES[target.layout]
    blank = text is None or not text.strip()
    doc = JsonText("{}\n" if blank else str(text), "  ", str(target.path))
    for name in disable:
        doc.set((*section, name), key, off)
    doc.ensure_object(section)
    doc.set(section, BRIDGE_NAME, entry)
    return doc.text


def plan_undo(target: Target) -> Change:
    before = read_file(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = decode(before, target.path)
    doc = parse(text, target.path)
    section = SWITCHES[target.layout][0]
    entry = object_at(doc, section).get(BRIDGE_NAME)
    backups = list_backups(target.path)
    original = read_file(backups[0]) if backups else None
    off = _turned_off(doc, original, target)
    if entry is None and not off:
        note = f"mcpmanager is not installed in {target.path}: nothing to undo"
        return Change(target, "undo", before, before, notes=(note,))
    if isinstance(entry, dict):
        if original is not None and _redo(original, target, entry, off) == before:
            return Change(target, "undo", before, original, moved=tuple(off), restore=backups[0])
        if _redo(None, target, entry, ()) == before:
            note = f"{target.path} was created by mcpmanager's install: undo removes it"
            return Change(target, "undo", before, None, notes=(note,))
    return _surgical_undo(target, before, text, off, original, backups)


def _redo(original: bytes | None, target: Target, entry: dict[str, Any], off: Sequence[str]) -> bytes | None:
    try:
        text = decode(original, target.path) if original is not None else None
        parse(text, target.path)
        return installed(text, target, entry, off).encode("utf-8")
    except InstallError:
        return None  # a backup that no longer reads cannot be what install wrote


def _surgical_undo(
    target: Target, before: bytes, text: str, off: Sequence[str], original: bytes | None, backups: list[Path]
) -> Change:
    """The file was edited since install: keep the edits, take out only what install put in."""
    section, key, _ = SWITCHES[target.layout]
    doc = JsonText(text, "  ", str(target.path))
    doc.remove(section, BRIDGE_NAME)
    was = object_at(_parsed(original, target) or {}, section)
    for name in off:
        old = was[name]
        if key in old:
            doc.set((*section, name), key, old[key])
        else:
            doc.remove((*section, name), key)
    notes = [
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's entry "
        "removed" + (f" and the servers it turned off turned on again ({', '.join(off)})" if off else "")
    ]
    if backups:
        notes.append(f"the file as it was before the install is kept in {backups[0]}")
    after = doc.text.encode("utf-8")
    return Change(target, "undo", before, after, moved=tuple(off), exact=False, notes=tuple(notes))


def inspect(
    target: Target, mode_of: Callable[[Any], InstalledMode | None], config: Config | None, home: Path | None
) -> TargetState:
    """As `install.inspect`; never raises for what is in the file."""
    try:
        before = read_file(target.path)
        doc = parse(decode(before, target.path) if before is not None else None, target.path)
        served = tuple(_served(doc, target.layout, config, home)) if config is not None else ()
        backups = list_backups(target.path)
        mode = mode_of(object_at(doc, SWITCHES[target.layout][0]).get(BRIDGE_NAME))
        off = _turned_off(doc, read_file(backups[0]), target) if backups and mode is not None else []
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    return TargetState(target, mode, served, tuple(off), tuple(backups))


# Reading -----------------------------------------------------------------------------------------


def _served(doc: dict[str, Any], layout: Layout, config: Config | None, home: Path | None) -> list[str]:
    """The servers of the file that mcpmanager serves and the client has on (read as import reads
    them, so an imported server is recognised; mcpmanager's own entry aside)."""
    if config is None:
        return []
    entries = {k: v for k, v in object_at(doc, SWITCHES[layout][0]).items() if k != BRIDGE_NAME}
    found = read_entries(entries, home or Path.home(), layout)
    return [name for name, server in found.items() if not server.disabled and served_by(server, config)]


def _turned_off(doc: dict[str, Any], original: bytes | None, target: Target) -> list[str]:
    """The servers off now that were on in `original` (the file before the install)."""
    section, key, off = SWITCHES[target.layout]
    was = object_at(_parsed(original, target) or {}, section)

    def is_off(entry: Any) -> bool:
        return isinstance(entry, dict) and entry.get(key) is off

    def is_on(entry: Any) -> bool:
        return isinstance(entry, dict) and entry.get(key) is not off

    return [name for name, entry in object_at(doc, section).items() if is_off(entry) and is_on(was.get(name))]


def _parsed(data: bytes | None, target: Target) -> dict[str, Any] | None:
    try:
        return parse(decode(data, target.path), target.path) if data is not None else None
    except InstallError:
        return None
