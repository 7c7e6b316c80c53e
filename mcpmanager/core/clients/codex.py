"""Codex's `config.toml` as a dialect: install, undo and export edit it as text (`codex_toml` finds
the tables), and every edit is checked by parsing the result with `tomllib`: it must be the file as
it was with only those values changed, else nothing is written (InstallError).

- Install appends a `[mcp_servers.mcpmanager]` table (`command`, `args`) at the end of the file, after
  a blank line, in the file's own line ends; nothing else is touched. A different mcpmanager table
  (another mode) is replaced in place, its table's lines only.
- `--disable-served` uses Codex's own switch: `enabled = false`, which keeps the server in the file but
  off (https://developers.openai.com/codex/mcp; `codex mcp list` shows it disabled, as in
  https://github.com/openai/codex/issues/16045), written as one line right after the
  server's `[mcp_servers.NAME]` header with a comment saying mcpmanager put it there (an
  `enabled = …` line already in the table is replaced by it). A server written another way (inline
  or dotted keys) cannot take that line: refused, nothing written.
- Undo after the file was edited takes out mcpmanager's table and its `enabled = false` lines.
- Export appends one table per server, its `env` and `http_headers` as inline tables (so undo takes
  out exactly its lines). Replacing a server takes out its table and its sub-tables
  (`[mcp_servers.NAME.env]`) first; export's undo checks its result the same way.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.codex_toml import (
    ENABLED_LINE,
    OFF_LINE,
    SECTION,
    TomlError,
    entries,
    load,
    newline_of,
    read_servers,
    server_table,
    servers_of,
    tables,
)
from mcpmanager.core.clients.dialect import Dialect, PutBack, Spot, TakenOut, edited_note
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.json_servers import unsafe_undo
from mcpmanager.core.clients.served import BRIDGE_NAME, served_by
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig

_SECTION = (SECTION,)


def _doc(text: str | None, path: Path) -> dict[str, Any]:
    try:
        return load(text or "", path)
    except TomlError as exc:
        raise InstallError(f"{exc}; not changed") from None


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str:
    """A value as TOML: JSON's string escapes are TOML's basic-string escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def table(name: str, entry: Mapping[str, Any], newline: str) -> str:
    """`[mcp_servers.NAME]` and its `key = value` lines."""
    lines = [f"[{SECTION}.{_key(name)}]", *(f"{key} = {_value(value)}" for key, value in entry.items())]
    return newline.join(lines) + newline


def _appended(out: str, lines: str, nl: str) -> str:
    """`lines` after a blank line at the end (none in an empty file)."""
    if out and not out.endswith("\n"):
        out += nl
    return out + (nl if out.strip() else "") + lines


def _reads_as(out: str, path: Path, expected: dict[str, Any]) -> bool:
    try:
        return load(out, path) == expected
    except TomlError:
        return False


def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """The lines of the server's table and of its sub-tables."""
    return [(start, end) for parts, start, end in tables(text) if parts[:2] == [SECTION, name]]


def _cut(text: str, name: str) -> str:
    """`text` without the server's tables. Blank and comment lines at the end of a run of them stay
    (they belong to what follows), and the blank line before the run goes (export writes one)."""
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    spans = sorted(_spans(text, name))
    for number, (start, end) in enumerate(spans):
        last = number + 1 == len(spans) or spans[number + 1][0] != end
        while last and end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        drop.update(range(start, end))
        if start > 0 and start - 1 not in drop and not lines[start - 1].strip():
            drop.add(start - 1)
    return "".join(line for number, line in enumerate(lines) if number not in drop)


class Codex(Dialect):
    def read(self, text: str, path: Path, home: Path) -> tuple[list[ServerConfig], list[str]]:
        return read_servers(text, path)

    # Install and undo --------------------------------------------------------------------------

    def check(self, text: str | None, target: Target) -> None:
        _doc(text, target.path)

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        return entry

    def bridge_of(self, text: str | None, target: Target) -> Any:
        return servers_of(_doc(text, target.path)).get(BRIDGE_NAME)

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        found = entries(text or "", target.path)
        return [(_SECTION, n) for n, s in found.items() if n != BRIDGE_NAME and not s.disabled and served_by(s, config)]

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        path = target.path
        out = text or ""
        expected = copy.deepcopy(_doc(out, path))
        nl = newline_of(out)
        for _, name in disable:
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
            out = _appended(out, table(BRIDGE_NAME, entry, nl), nl)
        elif mine != entry:
            span = server_table(out, BRIDGE_NAME)
            if span is None:
                raise InstallError(f"{path}: mcp_servers.{BRIDGE_NAME} is not written as a table; not changed")
            lines = out.splitlines(keepends=True)
            start, end = span
            while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
                end -= 1
            lines[start:end] = [table(BRIDGE_NAME, entry, nl)]
            out = "".join(lines)
        expected.setdefault(SECTION, {})
        if not isinstance(expected[SECTION], dict):
            raise InstallError(f"{path}: mcp_servers: expected a table of servers; not changed")
        expected[SECTION][BRIDGE_NAME] = entry
        if not _reads_as(out, path, expected):
            raise InstallError(f"{path}: mcpmanager cannot add its table to this file safely as text; not changed")
        return out

    def off_wording(self, text: str) -> str:
        return "enabled = false"

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        """The servers whose table has mcpmanager's `enabled = false` line."""
        lines = text.splitlines()
        return [
            (_SECTION, p[1]) for p, s, e in tables(text) if len(p) == 2 and p[0] == SECTION and OFF_LINE in lines[s:e]
        ]

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        lines = text.splitlines(keepends=True)
        span = server_table(text, BRIDGE_NAME)
        if span is not None:
            start, end = span
            if start > 0 and not lines[start - 1].strip():
                start -= 1  # the blank line install put before it
            del lines[start:end]
        after = "".join(line for line in lines if line.rstrip("\r\n") != OFF_LINE)
        _doc(after, target.path)
        names = tuple(name for _, name in off)
        return TakenOut(after, names, (edited_note(target, "table", names),))

    # Export --------------------------------------------------------------------------------------

    def entries(self, text: str | None, target: Target) -> dict[str, Any]:
        return dict(servers_of(_doc(text, target.path)))

    def as_imported(
        self, text: str | None, target: Target, existing: dict[str, Any], home: Path
    ) -> dict[str, ServerConfig]:
        return entries(text or "", target.path)

    def with_entries(
        self, text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]
    ) -> str:
        """A table appended for each entry (those in `replace` taken out first)."""
        path = target.path
        out = text or ""
        expected = copy.deepcopy(_doc(out, path))
        nl = newline_of(out)
        for name in replace:
            if self.entry_text(out, target, name) is None:
                raise InstallError(
                    f"{path}: {SECTION}.{name} is not written as a [{SECTION}.{name}] table; not changed"
                )
            out = _cut(out, name)
        for name, entry in entries.items():
            out = _appended(out, table(name, entry, nl), nl)
        expected.setdefault(SECTION, {})
        if not isinstance(expected[SECTION], dict):
            raise InstallError(f"{path}: {SECTION}: expected a table of servers; not changed")
        expected[SECTION].update(copy.deepcopy(dict(entries)))
        if not _reads_as(out, path, expected):
            raise InstallError(f"{path}: mcpmanager cannot add its tables to this file safely as text; not changed")
        return out

    def entry_text(self, text: str, target: Target, name: str) -> str | None:
        """The lines of `[mcp_servers.NAME]` and its sub-tables as written, or None if it is not a table."""
        if server_table(text, name) is None:
            return None
        lines = text.splitlines(keepends=True)
        kept = [line for start, end in _spans(text, name) for line in lines[start:end]]
        while kept and not kept[-1].strip():
            kept.pop()  # the blank lines before what follows are not the table's
        found = "".join(kept)
        return found if found.endswith("\n") else found + newline_of(text)

    def without(self, text: str, target: Target, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
        """Without the tables of `names`; those in `put_back` get those lines (their table before)."""
        out = text
        nl = newline_of(text)
        expected = copy.deepcopy(_doc(text, target.path))
        servers = expected.get(SECTION)
        for name in names:
            out = _cut(out, name)
            if isinstance(servers, dict):
                servers.pop(name, None)
        for name in names:
            if name in put_back:
                out = _appended(out, put_back[name][0], nl)
                expected.setdefault(SECTION, {})[name] = copy.deepcopy(put_back[name][1])
        try:
            got: dict[str, Any] | None = _doc(out, target.path)
        except InstallError:
            got = None
        if expected.get(SECTION) == {} and isinstance(got, dict) and SECTION not in got:
            del expected[SECTION]  # its last table taken out: no `[mcp_servers]` left to read
        if got != expected:
            raise unsafe_undo(target.path)
        return out
