"""The text edits `mcpmanager export` makes in a YAML client file's servers section, by the servers'
names: a mapping of name → entry (Goose's `extensions`) or a list of items each with its `name`
(Continue's `mcpServers`); the dialects (`yaml_dialects`) say which, as a `Section`.

As install's YAML edits (`yaml_dialects`), whole lines go in after the section's last entry, in the
file's own indentation and line ends (a section that is missing is added at the end; `extensions:`
or `mcpServers:` with nothing under it, `{}` or `[]`, gets a block under it). Replacing an entry
takes out its lines first. A section written in flow style (`extensions: {a: …}`) cannot take
lines: refused. Every edit is checked by parsing the result: anything but the expected values
changed, and nothing is written (InstallError).

Undo after an edit puts a replaced entry back as its lines from the backup; when the client rewrote
the file at another indentation since (Goose writes 2 spaces), at their old column they would nest
under the entry above, so the entry is rendered afresh at the file's indentation instead. The
result is checked against the document it must be, as export's own edits are.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpmanager.core.clients import yaml_text as yt
from mcpmanager.core.clients.dialect import PutBack
from mcpmanager.core.clients.errors import InstallError


@dataclass(frozen=True)
class Section:
    """A YAML client file's servers section, as export edits it."""

    name: str  # its key at the top level
    listed: bool  # a list of items each with a `name`; else a mapping of name → entry
    what: str  # what it must be, for the refusal: "a list of servers"
    new_file: str = ""  # what a file with nothing in it starts with (Continue: its header)

    def document(self, text: str | None, path: Path) -> tuple[Any, Node | None]:
        return yt.document(text, path, self.name, list if self.listed else dict, self.what)


def yaml_entries(text: str | None, spec: Section, path: Path) -> dict[str, Any]:
    """The client's entries by name (Continue: each item by its `name`, the first of a name)."""
    doc, _ = spec.document(text, path)
    section = doc.get(spec.name) if isinstance(doc, dict) else None
    if not spec.listed:
        return {str(k): v for k, v in section.items()} if isinstance(section, dict) else {}
    named = [(v["name"], v) for v in section or [] if isinstance(v, dict) and isinstance(v.get("name"), str)]
    return dict(reversed(named))


def _section(out: str, spec: Section, path: Path) -> tuple[ScalarNode, Node] | None:
    _, root = spec.document(out, path)
    return yt.pairs(root).get(spec.name)


def _span(out: str, spec: Section, path: Path, name: str) -> tuple[int, int] | None:
    """Where entry `name`'s lines are, when its section is in block style."""
    found = _section(out, spec, path)
    if found is None or not yt.is_block(found[1]):
        return None
    if not spec.listed:
        entry = yt.pairs(found[1]).get(name)
        if entry is None:
            return None
        key, value = entry
        return yt.line_start(out, key.start_mark.index), yt.next_line(
            out, yt.content_end(out, value, key.end_mark.index)
        )
    for item in yt.items(found[1]):
        named = yt.pairs(item).get("name")
        if named is not None and isinstance(named[1], ScalarNode) and named[1].value == name:
            at = item.start_mark.index - 1
            while at > 0 and out[at] in " \t\r\n":
                at -= 1  # back to its `-`
            return yt.line_start(out, at), yt.next_line(out, yt.content_end(out, item))
    return None


def yaml_entry_text(text: str, spec: Section, path: Path, name: str) -> str | None:
    """Entry `name`'s lines as written, or None when they cannot be told apart (flow style, absent)."""
    span = _span(text, spec, path, name)
    if span is None:
        return None
    found = text[span[0] : span[1]]
    return found if found.endswith("\n") else found + yt.newline_of(text)


def _rendered(out: str, spec: Section, entries: Mapping[str, Any], found: Node | None, nl: str, column: int) -> str:
    """The entries' lines: under a block section like its first entry, else at `column`."""
    unit = 2
    if not spec.listed:
        indent = column
        if isinstance(found, MappingNode) and found.value:
            first_key, first_value = found.value[0]
            indent = first_key.start_mark.column
            if yt.is_block(first_value) and isinstance(first_value, MappingNode) and first_value.value:
                unit = max(first_value.value[0][0].start_mark.column - indent, 1)
        lines = [
            line for name, e in entries.items() for line in [f"{yt.key_text(name)}:", *yt.block_lines(e, unit, unit)]
        ]
        return "".join(f"{' ' * indent}{line}{nl}" for line in lines)
    dash = column
    if isinstance(found, SequenceNode) and found.value:
        first = found.value[0]
        dash = yt.dash_column(out, first)
        unit = max(first.start_mark.column - dash, 1) if isinstance(first, MappingNode) else 2
    return "".join(line + nl for e in entries.values() for line in yt.item_lines(e, dash, unit))


def _put(out: str, spec: Section, path: Path, entries: Mapping[str, Any], raw: str = "") -> str:
    """`out` with the entries' lines (and `raw` lines, as written) at the end of the section."""
    if not entries and not raw:
        return out
    nl, section = yt.newline_of(out), spec.name
    found = _section(out, spec, path)
    if found is None:
        if out and not out.endswith("\n"):
            out += nl
        return out + f"{section}:{nl}" + _rendered(out, spec, entries, None, nl, 2) + raw
    key, value = found
    if yt.is_null(value) or (isinstance(value, MappingNode | SequenceNode) and value.flow_style and not value.value):
        out = yt.without_value(out, value)
        lines = _rendered(out, spec, entries, None, nl, key.start_mark.column + 2) + raw
        return yt.insert_lines(out, yt.next_line(out, key.end_mark.index), lines, nl)
    if not yt.is_block(value):
        raise InstallError(
            f"{path}: {section}: not written in block style: mcpmanager cannot add its lines there; not changed"
        )
    lines = _rendered(out, spec, entries, value, nl, 0) + raw
    return yt.insert_lines(out, yt.next_line(out, yt.content_end(out, value)), lines, nl)


def yaml_with(text: str | None, spec: Section, path: Path, entries: Mapping[str, Any], replace: Collection[str]) -> str:
    """`text` with the entries written (those in `replace` taken out first)."""
    out = text or ""
    if spec.new_file and not out.strip():
        out += spec.new_file  # as the client writes a new file
    doc, _ = spec.document(out, path)
    expected = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for name in replace:
        span = _span(out, spec, path, name)
        if span is None:
            raise InstallError(f"{path}: {spec.name}.{name}: not written in block style; not changed")
        out = out[: span[0]] + out[span[1] :]
    out = _put(out, spec, path, entries)
    if not spec.listed:
        if not isinstance(expected.get(spec.name), dict):
            expected[spec.name] = {}
        expected[spec.name].update(copy.deepcopy(dict(entries)))
    else:
        kept = [v for v in expected.get(spec.name) or [] if not (isinstance(v, dict) and v.get("name") in replace)]
        expected[spec.name] = kept + copy.deepcopy(list(entries.values()))
    return yt.reads_as(
        out, path, expected, "mcpmanager cannot write its entries into this file safely as text; not changed"
    )


def yaml_without(text: str, spec: Section, path: Path, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
    """`text` without the entries `names`; those in `put_back` get their lines back (with their value
    before), re-rendered when the file's indentation changed since."""
    doc, _ = spec.document(text, path)
    expected = _expected_without(doc, spec, names, {n: put_back[n][1] for n in names if n in put_back})
    out = text
    for name in names:
        span = _span(out, spec, path, name)
        if span is None:  # flow style now: its text cannot be told apart, so nothing is taken out
            raise InstallError(f"{path}: {spec.name}.{name}: not written in block style any more; nothing undone")
        out = out[: span[0]] + out[span[1] :]
    out = _put(out, spec, path, {}, _put_back_lines(out, spec, path, names, put_back))
    try:
        got, _ = yt.load(out, path)
    except yt.YamlError:
        got = None
    if _emptied(got, spec.name) != _emptied(expected, spec.name):
        raise InstallError(
            f"{path}: mcpmanager cannot take its entries out of this file safely as text; nothing undone"
        )
    return out


def _expected_without(doc: Any, spec: Section, names: Collection[str], previous: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the entries `names` (Continue: the first item of each name, as `_span`
    finds it), the values in `previous` at the section's end."""
    expected = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    section = spec.name
    if not spec.listed:
        kept = dict(expected.get(section) or {})
        for name in names:
            kept.pop(name, None)
        expected[section] = {**kept, **copy.deepcopy(dict(previous))}
        return expected
    listed = list(expected.get(section) or [])
    for name in names:
        first = next((i for i, v in enumerate(listed) if isinstance(v, dict) and v.get("name") == name), None)
        if first is not None:
            del listed[first]
    expected[section] = listed + copy.deepcopy(list(previous.values()))
    return expected


def _emptied(doc: Any, section: str) -> Any:
    """`doc` with an empty section read as none: taking out its last entry leaves `extensions:`."""
    if isinstance(doc, dict) and doc.get(section) in ({}, [], None) and section in doc:
        return {**doc, section: None}
    return doc


def _put_back_lines(
    out: str, spec: Section, path: Path, names: Collection[str], put_back: Mapping[str, PutBack]
) -> str:
    """The lines put back, as they were written when their column is the section's now; else (the
    client rewrote the file at another indentation since) rendered as new entries are, so an entry
    cannot end up nested in the one above it."""
    nl = yt.newline_of(out)
    found = _section(out, spec, path)
    block = found[1] if found is not None and yt.is_block(found[1]) and found[1].value else None
    column = 2 if found is None else found[0].start_mark.column + 2
    if isinstance(block, MappingNode):
        column = block.value[0][0].start_mark.column
    elif isinstance(block, SequenceNode):
        column = yt.dash_column(out, block.value[0])
    lines = []
    for name in names:
        if name not in put_back:
            continue
        raw, value = put_back[name]
        raw = raw.replace("\r\n", "\n").replace("\n", nl)
        first = next((line for line in raw.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
        if len(first) - len(first.lstrip(" ")) == column or not isinstance(value, dict):
            lines.append(raw)
        else:
            lines.append(_rendered(out, spec, {name: value}, block, nl, column))
    return "".join(lines)
