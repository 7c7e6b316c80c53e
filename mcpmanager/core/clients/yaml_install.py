"""Install and undo for the YAML clients, Goose (`goose`) and Continue (`continue_yaml`); `install`
hands the `goose` and `continue` layouts here.

- Install writes mcpmanager's entry (an extension for Goose, a list item for Continue) as whole
  lines after the last server, in the file's own indentation and line ends; an entry for another
  mode is replaced in place, its own lines only. `--disable-served`: Goose's own `enabled: false`;
  for Continue, which has no off switch in its files, the item's lines commented out.
- Every edit is checked by parsing the result: it must be the document as it was with only those
  values changed, else nothing is written (InstallError). A file that does not parse is refused
  with its line and column.
- Undo is as for the other clients: the newest backup comes back byte for byte when installing onto
  it gives the file as it is now; otherwise (edited since: Goose rewrites its file itself) only
  mcpmanager's entry goes and what it turned off is turned on again, the rest kept (when Goose
  rewrote the file, mcpmanager's marks went with its comments: what was on in the backup and is off
  now is what install turned off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from mcpmanager.core.clients import continue_yaml, goose
from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.change import Change, InstalledMode, Target, TargetState
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import served_by
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.config.servers import StdioServerConfig


def _dialect(target: Target) -> ModuleType:
    return goose if target.layout == "goose" else continue_yaml


def bridge_entry(layout: str, command: Sequence[str], mode: Mode | None) -> dict[str, Any]:
    """mcpmanager's entry in the client's own shape (through the same writer export uses)."""
    args = [*command[1:], "connect", *(["--mode", mode] if mode is not None else [])]
    bridge = StdioServerConfig(goose.BRIDGE, command[0], args)
    if layout == "goose":
        return goose.extension_of(bridge, "mcpmanager: the servers it manages, through one connection")
    return continue_yaml.item_of(bridge)


def _served(target: Target, text: str | None, config: Config) -> list[str]:
    """The servers of the file mcpmanager already serves and the client starts, by their name there."""
    if target.layout == "goose":
        found = goose.entries(text or "", target.path).items()
        return [n for n, (s, on) in found if n != goose.BRIDGE and on and served_by(s, config) is not None]
    listed = continue_yaml.entries(text or "", target.path)
    return [n for n, s in listed if n != continue_yaml.BRIDGE and served_by(s, config) is not None]


def _notes(target: Target, config: Config | None, home: Path | None) -> list[str]:
    """Continue: servers mcpmanager serves that are in block files, which are not edited."""
    if target.layout != "continue" or config is None:
        return []
    notes = []
    for block in continue_yaml.block_files(target.path.parent / "mcpServers"):
        read = read_client_config(target.client, block, "continue-block", home=home)
        names = [s.name for s in read.servers if served_by(s, config) is not None]
        if names:
            notes.append(
                f"{block} also has {', '.join(names)}, served by mcpmanager: mcpmanager does not edit block files; "
                "remove them there to not load their tools twice"
            )
    return notes


def plan_install(
    target: Target,
    command: Sequence[str],
    mode: Mode | None,
    *,
    config: Config | None,
    disable_served: bool,
    home: Path | None,
) -> Change:
    dialect = _dialect(target)
    before = read_file(target.path)
    text = decode(before, target.path) if before is not None else None
    if target.layout == "continue":
        continue_yaml.refuse_hiding_config_json(target.path, before is not None)
    dialect.document(text, target.path)  # refuses a file that does not read, before anything else
    served = tuple(_served(target, text, config)) if config is not None else ()
    entry = bridge_entry(target.layout, command, mode)
    after = dialect.installed(text, target.path, entry, served if disable_served else ())
    return Change.install(target, before, after, mode, served, disable_served, _notes(target, config, home))


def plan_undo(target: Target) -> Change:
    dialect = _dialect(target)
    before = read_file(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = decode(before, target.path)
    doc, _ = dialect.document(text, target.path)
    entry = dialect.bridge_of(doc)
    off = dialect.turned_off(text, target.path)
    if entry is None and not off:
        note = f"mcpmanager is not installed in {target.path}: nothing to undo"
        return Change(target, "undo", before, before, notes=(note,))
    if isinstance(entry, dict):
        for backup in list_backups(target.path)[:1]:
            original = read_file(backup)
            if original is not None and _redo(dialect, original, target.path, entry, off) == before:
                return Change(target, "undo", before, original, moved=tuple(off), restore=backup)
        if _redo(dialect, None, target.path, entry, off) == before:
            note = f"{target.path} was created by mcpmanager's install: undo removes it"
            return Change(target, "undo", before, None, moved=tuple(off), notes=(note,))
    backups = list_backups(target.path)
    if target.layout == "goose":
        if not off:  # Goose rewrote the file, mcpmanager's comments with it: on before the install, off now
            kept = read_file(backups[0]) if backups else None
            off = goose.off_since(text, target.path, kept.decode("utf-8", "replace") if kept is not None else None)
        after = goose.take_out(text, target.path, off)
    else:
        after = continue_yaml.take_out(text, target.path)
    dialect.document(after, target.path)
    what = "extension" if target.layout == "goose" else "server"
    notes = [
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's {what} "
        "removed" + (f" and the servers it turned off turned on again ({', '.join(off)})" if off else "")
    ]
    if backups:
        notes.append(f"the file as it was before the install is kept in {backups[0]}")
    return Change(target, "undo", before, after.encode("utf-8"), moved=tuple(off), exact=False, notes=tuple(notes))


def _redo(
    dialect: ModuleType, original: bytes | None, path: Path, entry: dict[str, Any], off: Sequence[str]
) -> bytes | None:
    try:
        text = decode(original, path) if original is not None else None
        return str(dialect.installed(text, path, entry, off)).encode("utf-8")
    except InstallError:
        return None  # a backup that no longer reads cannot be what install wrote


def inspect(
    target: Target, mode_of: Callable[[Any], InstalledMode | None], config: Config | None = None
) -> TargetState:
    dialect = _dialect(target)
    try:
        before = read_file(target.path)
        text = decode(before, target.path) if before is not None else ""
        doc, _ = dialect.document(text, target.path)
        served = tuple(_served(target, text, config)) if config is not None else ()
        off = tuple(dialect.turned_off(text, target.path))
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    mode = mode_of(dialect.bridge_of(doc))
    return TargetState(target, mode, served, off, tuple(list_backups(target.path)))
