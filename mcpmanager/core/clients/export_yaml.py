"""The text edits `mcpmanager export` makes in the YAML clients' files: Goose's `extensions` mapping
(`goose`) and Continue's `mcpServers` list (`continue_yaml`), by the servers' names.

As install's YAML edits (`yaml_install`), whole lines go in after the section's last entry, in the
file's own indentation and line ends (a section that is missing is added at the end; `extensions:`
or `mcpServers:` with nothing under it, `{}` or `[]`, gets a block under it). Replacing an entry
takes out its lines first. A section written in flow style (`extensions: {a: …}`) cannot take
lines: refused. Every edit is checked by parsing the result: anything but the expected values
changed, and nothing is written (InstallError).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpmanager.core.clients import continue_yaml, goose
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.yaml_text import (
    YamlError,
    block_lines,
    content_end,
    dash_column,
    insert_lines,
    is_block,
    is_null,
    item_lines,
    items,
    key_text,
    line_start,
    load,
    newline_of,
    next_line,
    pairs,
    without_value,
)

YAML_LAYOUTS = ("goose", "continue")


def _dialect(layout: str) -> ModuleType:
    return goose if layout == "goose" else continue_yaml


def yaml_entries(text: str | None, layout: str, path: Path) -> dict[str, Any]:
    """The client's entries by name (Continue: each item by its `name`, the first of a name)."""
    doc, _ = _dialect(layout).document(text, path)
    section = doc.get(_dialect(layout).SECTION) if isinstance(doc, dict) else None
    if layout == "goose":
        return {str(k): v for k, v in section.items()} if isinstance(section, dict) else {}
    named = [(v["name"], v) for v in section or [] if isinstance(v, dict) and isinstance(v.get("name"), str)]
    return dict(reversed(named))


def _section(out: str, layout: str, path: Path) -> tuple[ScalarNode, Node] | None:
    _, root = _dialect(layout).document(out, path)
    return pairs(root).get(_dialect(layout).SECTION)


def _span(out: str, layout: str, path: Path, name: str) -> tuple[int, int] | None:
    """Where entry `name`'s lines are, when its section is in block style."""
    found = _section(out, layout, path)
    if found is None or not is_block(found[1]):
        return None
    if layout == "goose":
        entry = pairs(found[1]).get(name)
        if entry is None:
            return None
        key, value = entry
        return line_start(out, key.start_mark.index), next_line(out, content_end(out, value, key.end_mark.index))
    for item in items(found[1]):
        named = pairs(item).get("name")
        if named is not None and isinstance(named[1], ScalarNode) and named[1].value == name:
            at = item.start_mark.index - 1
            while at > 0 and out[at] in " \t\r\n":
                at -= 1  # back to its `-`
            return line_start(out, at), next_line(out, content_end(out, item))
    return None


def yaml_entry_text(text: str, layout: str, path: Path, name: str) -> str | None:
    """Entry `name`'s lines as written, or None when they cannot be told apart (flow style, absent)."""
    span = _span(text, layout, path, name)
    if span is None:
        return None
    found = text[span[0] : span[1]]
    return found if found.endswith("\n") else found + newline_of(text)


def _rendered(out: str, layout: str, entries: Mapping[str, Any], found: Node | None, nl: str, column: int) -> str:
    """The entries' lines: under a block section like its first entry, else at `column`."""
    unit = 2
    if layout == "goose":
        indent = column
        if isinstance(found, MappingNode) and found.value:
            first_key, first_value = found.value[0]
            indent = first_key.start_mark.column
            if is_block(first_value) and isinstance(first_value, MappingNode) and first_value.value:
                unit = max(first_value.value[0][0].start_mark.column - indent, 1)
        lines = [line for name, e in entries.items() for line in [f"{key_text(name)}:", *block_lines(e, unit, unit)]]
        return "".join(f"{' ' * indent}{line}{nl}" for line in lines)
    dash = column
    if isinstance(found, SequenceNode) and found.value:
        first = found.value[0]
        dash = dash_column(out, first)
        unit = max(first.start_mark.column - dash, 1) if isinstance(first, MappingNode) else 2
    return "".join(line + nl for e in entries.values() for line in item_lines(e, dash, unit))


def _put(out: str, layout: str, path: Path, entries: Mapping[str, Any], raw: str = "") -> str:
    """`out` with the entries' lines (and `raw` lines, as written) at the end of the section."""
    if not entries and not raw:
        return out
    nl, section = newline_of(out), _dialect(layout).SECTION
    found = _section(out, layout, path)
    if found is None:
        if out and not out.endswith("\n"):
            out += nl
        return out + f"{section}:{nl}" + _rendered(out, layout, entries, None, nl, 2) + raw
    key, value = found
    if is_null(value) or (isinstance(value, MappingNode | SequenceNode) and value.flow_style and not value.value):
        out = without_value(out, value)
        lines = _rendered(out, layout, entries, None, nl, key.start_mark.column + 2) + raw
        return insert_lines(out, next_line(out, key.end_mark.index), lines, nl)
    if not is_block(value):
        raise InstallError(
            f"{path}: {section}: not written in block style: mcpmanager cannot add its lines there; not changed"
        )
    lines = _rendered(out, layout, entries, value, nl, 0) + raw
    return insert_lines(out, next_line(out, content_end(out, value)), lines, nl)


def yaml_with(text: str | None, layout: str, path: Path, entries: Mapping[str, Any], replace: Collection[str]) -> str:
    """`text` with the entries written (those in `replace` taken out first)."""
    out = text or ""
    if layout == "continue" and not out.strip():
        out += continue_yaml.NEW_FILE  # as Continue writes a new config.yaml
    dialect = _dialect(layout)
    doc, _ = dialect.document(out, path)
    expected = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for name in replace:
        span = _span(out, layout, path, name)
        if span is None:
            raise InstallError(f"{path}: {dialect.SECTION}.{name}: not written in block style; not changed")
        out = out[: span[0]] + out[span[1] :]
    out = _put(out, layout, path, entries)
    if layout == "goose":
        if not isinstance(expected.get(dialect.SECTION), dict):
            expected[dialect.SECTION] = {}
        expected[dialect.SECTION].update(copy.deepcopy(dict(entries)))
    else:
        kept = [
            v for v in expected.get(dialect.SECTION) or [] if not (isinstance(v, dict) and v.get("name") in replace)
        ]
        expected[dialect.SECTION] = kept + copy.deepcopy(list(entries.values()))
    try:
        got, _ = load(out, path)
    except YamlError:
        got = None
    if got != expected:
        raise InstallError(f"{path}: mcpmanager cannot write its entries into this file safely as text; not changed")
    return out


def yaml_without(text: str, layout: str, path: Path, names: Collection[str], put_back: Mapping[str, str]) -> str:
    """`text` without the entries `names`; those in `put_back` get those lines (their entry before)."""
    out = text
    for name in names:
        span = _span(out, layout, path, name)
        if span is not None:
            out = out[: span[0]] + out[span[1] :]
    out = _put(out, layout, path, {}, "".join(put_back[n] for n in names if n in put_back))
    _dialect(layout).document(out, path)
    return out
