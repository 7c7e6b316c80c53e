"""What changed in a held tool (prompt, template), as a person reads it: the approved and the new definition side by
side as lines (text as text, schemas as indented JSON), removed lines and added lines marked, and
within a changed line the characters that differ (a rug pull is often one added sentence).

The window's review shows these lines; the text is masked first (`mask`: the server's masker), so a
secret a definition quotes is never shown, and the marked spans are of the masked text.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpmanager.core.catalogue.pins import KIND_FIELDS

# Every kind's parts, in the order they are shown: a template's address first, then as a tool's.
SHOWN = tuple(dict.fromkeys(("uriTemplate", *(key for fields in KIND_FIELDS.values() for key in fields))))

Kind = Literal[" ", "-", "+"]


@dataclass(frozen=True)
class DiffLine:
    kind: Kind  # " " in both, "-" only in the approved definition, "+" only in the new one
    text: str
    spans: tuple[tuple[int, int], ...] = ()  # a line changed in place: its changed characters, [start, end)


def shown(definition: Mapping[str, Any]) -> list[str]:
    """A definition as lines: each part under its name, text as text, anything else as JSON."""
    lines: list[str] = []
    for key in SHOWN:
        if key not in definition:
            continue
        value = definition[key]
        if isinstance(value, str):
            first, *rest = value.splitlines() or [""]
            lines += [f"{key}: {first}", *(f"  {line}" for line in rest)]
        else:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
            lines += [f"{key}:", *(f"  {line}" for line in text.splitlines())]
    return lines


def diff(
    approved: Mapping[str, Any], now: Mapping[str, Any], mask: Callable[[str], str] = lambda text: text
) -> list[DiffLine]:
    """Every line of both definitions in order: common ones once, removed then added ones marked."""
    old, new = [mask(line) for line in shown(approved)], [mask(line) for line in shown(now)]
    lines: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += [DiffLine(" ", line) for line in old[i1:i2]]
            continue
        removed, added = old[i1:i2], new[j1:j2]
        if len(removed) == len(added):  # lines changed in place: mark what differs within each
            pairs = [_changed_spans(a, b) for a, b in zip(removed, added, strict=True)]
            lines += [DiffLine("-", line, spans[0]) for line, spans in zip(removed, pairs, strict=True)]
            lines += [DiffLine("+", line, spans[1]) for line, spans in zip(added, pairs, strict=True)]
        else:
            lines += [DiffLine("-", line) for line in removed]
            lines += [DiffLine("+", line) for line in added]
    return lines


Spans = tuple[tuple[int, int], ...]


def _changed_spans(old: str, new: str) -> tuple[Spans, Spans]:
    """The characters of `old` that went and of `new` that came; none for lines with little in
    common (marking scattered letters would say less than the whole line)."""
    gone: list[tuple[int, int]] = []
    came: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < 0.5:
        return (), ()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            if i2 > i1:
                gone.append((i1, i2))
            if j2 > j1:
                came.append((j1, j2))
    return tuple(gone), tuple(came)
