"""Install and undo for Codex's `config.toml` (`install` hands the `codex` client here).

- Install appends a `[mcp_servers.mcpmanager]` table (`command`, `args`) at the end of the file, after
  a blank line, in the file's own line ends; nothing else is touched. A different mcpmanager table
  (another mode) is replaced in place, its table's lines only.
- `--disable-served` uses Codex's own switch: `enabled = false`, which keeps the server in the file but
  off (https://developers.openai.com/codex/mcp; `codex mcp list` shows it disabled, as in
  https://github.com/openai/codex/issues/16045), written as one line right after the
  server's `[mcp_servers.NAME]` header with a comment saying mcpmanager put it there (an
  `enabled = …` line already in the table is replaced by it). A server written another way (inline
  or dotted keys) cannot take that line: refused, nothing written.
- Every edit is checked by parsing the result with `tomllib`: it must be the file as it was with only
  those values changed, else nothing is written (InstallError).
- Undo is as for the other clients: the newest backup comes back byte for byte when installing onto
  it gives the file as it is now; otherwise (the file was edited since) mcpmanager's table and its
  `enabled = false` lines are taken out and the rest kept.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.change import Change, InstalledMode, Target, TargetState
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.codex_toml import (
    ENABLED_LINE,
    OFF_LINE,
    TomlError,
    entries,
    load,
    newline_of,
    render_table,
    server_table,
    servers_of,
    tables,
)
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import BRIDGE_NAME, served_by
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import Mode


def _doc(text: str | None, path: Path) -> dict[str, Any]:
    try:
        return load(text or "", path)
    except TomlError as exc:
        raise InstallError(f"{exc}; not changed") from None


def _served(text: str | None, path: Path, config: Config) -> list[str]:
    found = entries(text or "", path)
    return [n for n, s in found.items() if n != BRIDGE_NAME and not s.disabled and served_by(s, config)]


def _turned_off(text: str) -> list[str]:
    """The servers whose table has mcpmanager's `enabled = false` line."""
    lines = text.splitlines()
    return [p[1] for p, s, e in tables(text) if len(p) == 2 and p[0] == "mcp_servers" and OFF_LINE in lines[s:e]]


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
    _doc(text, target.path)
    served = tuple(_served(text, target.path, config)) if config is not None else ()
    after = installed(text, target.path, entry, served if disable_served else ())
    return Change.install(target, before, after, mode, served, disable_served)


def installed(text: str | None, path: Path, entry: dict[str, Any], disable: Sequence[str]) -> str:
    """`text` with mcpmanager's table and `enabled = false` in each of `disable`; deterministic (undo
    redoes it on the backup)."""
    out = text or ""
    expected = copy.deepcopy(_doc(out, path))
    nl = newline_of(out)
    for name in disable:
        span = server_table(out, name)
        if span is None:
            raise InstallError(
                f"{path}: mcp_servers.{name} is not written as a [mcp_servers.{name}] table: mcpmanager cannot "
                "turn it off there (no --disable-served, or write it as a table); not changed"
            )
        lines = out.splitlines(keepends=True)
        start, end = span
        if not lines[start].endswith("\n"):
            lines[start] += nl
        current = next((i for i in range(start + 1, end) if ENABLED_LINE.match(lines[i])), None)
        if current is None:
            lines.insert(start + 1, OFF_LINE + nl)
        else:
            lines[current] = OFF_LINE + lines[current][len(lines[current].rstrip("\r\n")) :]
        out = "".join(lines)
        servers_of(expected)[name]["enabled"] = False
    mine = servers_of(expected).get(BRIDGE_NAME)
    if mine is None:
        if out and not out.endswith("\n"):
            out += nl
        out += (nl if out.strip() else "") + render_table(BRIDGE_NAME, entry, nl)
    elif mine != entry:
        span = server_table(out, BRIDGE_NAME)
        if span is None:
            raise InstallError(f"{path}: mcp_servers.{BRIDGE_NAME} is not written as a table; not changed")
        lines = out.splitlines(keepends=True)
        start, end = span
        tail = end
        while tail > start + 1 and (not lines[tail - 1].strip() or lines[tail - 1].lstrip().startswith("#")):
            tail -= 1
        lines[start:tail] = [render_table(BRIDGE_NAME, entry, nl)]
        out = "".join(lines)
    expected.setdefault("mcp_servers", {})
    if not isinstance(expected["mcp_servers"], dict):
        raise InstallError(f"{path}: mcp_servers: expected a table of servers; not changed")
    expected["mcp_servers"][BRIDGE_NAME] = entry
    try:
        got = load(out, path)
    except TomlError:
        got = None
    if got != expected:
        raise InstallError(f"{path}: mcpmanager cannot add its table to this file safely as text; not changed")
    return out


def plan_undo(target: Target) -> Change:
    before = read_file(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = decode(before, target.path)
    entry = servers_of(_doc(text, target.path)).get(BRIDGE_NAME)
    off = _turned_off(text)
    if entry is None and not off:
        return Change(
            target, "undo", before, before, notes=(f"mcpmanager is not installed in {target.path}: nothing to undo",)
        )
    if isinstance(entry, dict):
        for backup in list_backups(target.path)[:1]:
            original = read_file(backup)
            if original is not None and _redo(original, target.path, entry, off) == before:
                return Change(target, "undo", before, original, moved=tuple(off), restore=backup)
        if _redo(None, target.path, entry, off) == before:
            note = f"{target.path} was created by mcpmanager's install: undo removes it"
            return Change(target, "undo", before, None, moved=tuple(off), notes=(note,))
    return _surgical_undo(target, before, text, off)


def _redo(original: bytes | None, path: Path, entry: dict[str, Any], off: Sequence[str]) -> bytes | None:
    try:
        text = decode(original, path) if original is not None else None
        return installed(text, path, entry, off).encode("utf-8")
    except InstallError:
        return None  # a backup that no longer reads cannot be what install wrote


def _surgical_undo(target: Target, before: bytes, text: str, off: Sequence[str]) -> Change:
    lines = text.splitlines(keepends=True)
    span = server_table(text, BRIDGE_NAME)
    if span is not None:
        start, end = span
        if start > 0 and not lines[start - 1].strip():
            start -= 1  # the blank line install put before it
        del lines[start:end]
    lines = [line for line in lines if line.rstrip("\r\n") != OFF_LINE]
    after = "".join(lines)
    _doc(after, target.path)
    notes = [
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's table "
        "removed" + (f" and the servers it turned off turned on again ({', '.join(off)})" if off else "")
    ]
    backups = list_backups(target.path)
    if backups:
        notes.append(f"the file as it was before the install is kept in {backups[0]}")
    return Change(target, "undo", before, after.encode("utf-8"), moved=tuple(off), exact=False, notes=tuple(notes))


def inspect(
    target: Target,
    mode_of: Callable[[Any], InstalledMode | None],
    config: Config | None = None,
) -> TargetState:
    try:
        before = read_file(target.path)
        text = decode(before, target.path) if before is not None else ""
        doc = _doc(text, target.path)
        served = tuple(_served(text, target.path, config)) if config is not None else ()
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    mode = mode_of(servers_of(doc).get(BRIDGE_NAME))
    return TargetState(target, mode, served, tuple(_turned_off(text)), tuple(list_backups(target.path)))
