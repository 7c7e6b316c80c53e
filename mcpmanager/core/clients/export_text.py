"""The text edits `mcpmanager export` makes in a client's file: entries put in, and taken out again
by its undo. As install's, they splice only what they are about, so every other byte stays.

- JSON and JSONC (every client but Codex): each entry goes into the client's servers object
  (`servers` for VS Code, `mcpServers` for the others; created when missing) through `JsonText`: a
  new member after the last one, in the file's indentation and line ends, or, replacing one, only
  that member's value.
- Codex's TOML: each server is a `[mcp_servers.NAME]` table appended at the end after a blank line,
  in the file's line ends, its `env` and `http_headers` as inline tables (one table per server, so
  undo takes out exactly its lines). Replacing a server takes out its table and its sub-tables
  (`[mcp_servers.NAME.env]`) first. Every edit is checked by parsing the result: anything but the
  expected values changed, and nothing is written (InstallError); undo's edits too (the file now,
  without export's entries, those it replaced back).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import gemini_allowed, zed
from mcpmanager.core.clients.change import Layout
from mcpmanager.core.clients.client_file import parse
from mcpmanager.core.clients.codex_toml import (
    SECTION,
    TomlError,
    load,
    newline_of,
    server_table,
    servers_of,
    tables,
)
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.json_edit import JsonText, Raw
from mcpmanager.core.config.json_text import KeyPath


def section_of(layout: Layout) -> KeyPath:
    """Where the client keeps its servers in the file export writes (Claude Code: the user scope)."""
    return {"vscode": ("servers",), "zed": zed.SECTION}.get(layout, ("mcpServers",))


def current_entries(text: str | None, layout: Layout, path: Path) -> dict[str, Any]:
    """The client's entries by name, as the file holds them now (InstallError if it does not read)."""
    if layout == "codex":
        return dict(servers_of(_toml(text, path)))
    value: Any = parse(text, path)
    for part in section_of(layout):
        value = value.get(part) if isinstance(value, dict) else None
    if value is not None and not isinstance(value, dict):
        raise InstallError(
            f"{path}: {'.'.join(map(str, section_of(layout)))}: expected an object of servers; not changed"
        )
    return dict(value or {})


# JSON ----------------------------------------------------------------------------------------------


def json_with(text: str | None, layout: Layout, path: Path, entries: Mapping[str, Any]) -> str:
    """`text` with each entry set (added, or its value replaced in place)."""
    blank = text is None or not text.strip()
    unit = "\t" if layout == "vscode" else "  "  # as the clients write new files
    doc = JsonText("{}\n" if blank else str(text), unit, str(path))
    section = section_of(layout)
    doc.ensure_object(section)
    for name, entry in entries.items():
        doc.set(section, name, entry)
    if layout == "gemini":  # or Gemini CLI blocks them
        gemini_allowed.allow(doc, list(entries))
    got = current_entries(doc.text, layout, path)
    if any(got.get(name) != entry for name, entry in entries.items()):
        raise InstallError(f"{path}: mcpmanager cannot write its entries into this file safely as text; not changed")
    return doc.text


def json_without(
    text: str,
    layout: Layout,
    path: Path,
    names: Collection[str],
    put_back: Mapping[str, str],
    previous: Mapping[str, Any],
) -> str:
    """`text` without the entries `names`; those in `put_back` get that text (their value before,
    `previous`). The result must read as the document with just those changes, or InstallError."""
    doc = JsonText(text, "  ", str(path))
    section = section_of(layout)
    expected = copy.deepcopy(parse(text, path))
    entries: Any = expected
    for part in section:
        entries = entries.get(part) if isinstance(entries, dict) else None
    for name in names:
        if name in put_back:
            doc.set(section, name, Raw(put_back[name]))
            entries[name] = copy.deepcopy(previous[name])
        else:
            doc.remove(section, name)
            entries.pop(name, None)
    if parse(doc.text, path) != expected:
        raise _unsafe_undo(path)
    return doc.text


def _unsafe_undo(path: Path) -> InstallError:
    return InstallError(f"{path}: mcpmanager cannot take its entries out of this file safely as text; nothing undone")


def json_entry_text(text: str, layout: Layout, path: Path, name: str) -> str | None:
    """The text of entry `name`'s value as written in `text` (comments and layout kept)."""
    return JsonText(text, "  ", str(path)).remove(section_of(layout), name)


# Codex's TOML --------------------------------------------------------------------------------------


def _toml(text: str | None, path: Path) -> dict[str, Any]:
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


def toml_table(name: str, entry: Mapping[str, Any], newline: str) -> str:
    lines = [f"[{SECTION}.{_key(name)}]", *(f"{key} = {_value(value)}" for key, value in entry.items())]
    return newline.join(lines) + newline


def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """The lines of the server's table and of its sub-tables."""
    return [(start, end) for parts, start, end in tables(text) if parts[:2] == [SECTION, name]]


def toml_table_text(text: str, name: str) -> str | None:
    """The lines of `[mcp_servers.NAME]` and its sub-tables as written, or None if it is not a table."""
    if server_table(text, name) is None:
        return None
    lines = text.splitlines(keepends=True)
    kept = [line for start, end in _spans(text, name) for line in lines[start:end]]
    while kept and not kept[-1].strip():
        kept.pop()  # the blank lines before what follows are not the table's
    found = "".join(kept)
    return found if found.endswith("\n") else found + newline_of(text)


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


def toml_with(text: str | None, path: Path, entries: Mapping[str, Any], replace: Collection[str]) -> str:
    """`text` with a table appended for each entry (those in `replace` taken out first)."""
    out = text or ""
    expected = copy.deepcopy(_toml(out, path))
    nl = newline_of(out)
    for name in replace:
        if toml_table_text(out, name) is None:
            raise InstallError(f"{path}: {SECTION}.{name} is not written as a [{SECTION}.{name}] table; not changed")
        out = _cut(out, name)
    for name, entry in entries.items():
        if out and not out.endswith("\n"):
            out += nl
        out += (nl if out.strip() else "") + toml_table(name, entry, nl)
    expected.setdefault(SECTION, {})
    if not isinstance(expected[SECTION], dict):
        raise InstallError(f"{path}: {SECTION}: expected a table of servers; not changed")
    expected[SECTION].update(copy.deepcopy(dict(entries)))
    try:
        got = load(out, path)
    except TomlError:
        got = None
    if got != expected:
        raise InstallError(f"{path}: mcpmanager cannot add its tables to this file safely as text; not changed")
    return out


def toml_without(
    text: str, path: Path, names: Collection[str], put_back: Mapping[str, str], previous: Mapping[str, Any]
) -> str:
    """`text` without the tables of `names`; those in `put_back` get those lines (their table before,
    `previous`). The result must read as the document with just those changes, or InstallError."""
    out = text
    nl = newline_of(text)
    expected = copy.deepcopy(_toml(text, path))
    servers = expected.get(SECTION)
    for name in names:
        out = _cut(out, name)
        if isinstance(servers, dict):
            servers.pop(name, None)
    for name in names:
        if name in put_back:
            if out and not out.endswith("\n"):
                out += nl
            out += (nl if out.strip() else "") + put_back[name]
            expected.setdefault(SECTION, {})[name] = copy.deepcopy(previous[name])
    try:
        got = _toml(out, path)
    except InstallError:
        got = None
    if expected.get(SECTION) == {} and isinstance(got, dict) and SECTION not in got:
        del expected[SECTION]  # its last table taken out: no `[mcp_servers]` left to read
    if got != expected:
        raise _unsafe_undo(path)
    return out
