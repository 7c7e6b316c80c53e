"""Editing a client's JSON or JSONC file as text: each change splices only the text it is about, so
every other key, value, comment, byte-order mark and blank line stays byte for byte."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.config.json_text import KeyPath, clean_jsonc, json_kind, render

_DECODER = json.JSONDecoder()


class Raw(str):
    """JSON text placed as it is: an entry moved verbatim, its comments and layout included."""


@dataclass(frozen=True)
class _Member:
    key: str
    at: int  # where the key starts
    start: int  # where the value starts
    end: int  # where the value ends


class JsonText:
    """A JSON or JSONC document edited in place: each change splices only the text it is about.

    Offsets come from `plain`, the text with comments and trailing commas blanked at the same
    offsets (strict JSON, the usual case, is its own plain text); the splices go into `text`."""

    def __init__(self, text: str, unit: str, source: str = "") -> None:
        self.text, self.source, self._default_unit = text, source, unit
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self._refresh()

    def value(self) -> Any:
        return json.loads(self.plain)

    def set(self, path: KeyPath, key: str, value: Any) -> None:
        """Give `key` of the object at `path` this value (a Raw text or a value to render); a value
        equal to what is there leaves the text alone."""
        obj = self._object(path)
        members, close = self._members(obj)
        old = next((m for m in reversed(members) if m.key == key), None)
        if old is not None:
            if not isinstance(value, Raw) and json.loads(self.plain[old.start : old.end]) == value:
                return
            self._splice([(old.start, old.end, self._render(value, self._line_indent(old.at)))])
            return
        # An empty object opens up unless the whole file is one line (minified); a new file opens up.
        single_line = "\n" not in self.text.strip() and self.plain.strip() != "{}"
        multiline = ("\n" in self.plain[obj : members[0].at]) if members else not single_line
        if not multiline:
            between, colon = (",", ":") if '": ' not in self.plain and ", " not in self.plain else (", ", ": ")
            text = (
                value if isinstance(value, Raw) else json.dumps(value, ensure_ascii=False, separators=(between, colon))
            )
            member = json.dumps(key, ensure_ascii=False) + colon + text
            where = members[-1].end if members else obj + 1
            self._splice([(where, where, between + member if members else member)])
            return
        indent = self._line_indent(members[0].at) if members else self._line_indent(obj) + self._unit()
        member = indent + json.dumps(key, ensure_ascii=False) + ": " + self._render(value, indent)
        nl = self.newline
        if not members:
            if self.text[obj + 1 : close].strip():  # only comments inside: keep them after the member
                self._splice([(obj + 1, obj + 1, nl + member)])
            else:
                self._splice([(obj + 1, close, nl + member + nl + self._line_indent(obj))])
            return
        last = members[-1]
        comma = self._comma_after(last.end)
        eol = self._line_end(last.end if comma is None else comma + 1)
        if eol is None:  # the closing brace (or more) on the same line: go right after the value
            self._splice([(last.end, last.end, "," + nl + member)])
        elif comma is None:  # a comma after the last value, the member on a line of its own after it
            if eol > last.end:
                self._splice([(eol, eol, nl + member), (last.end, last.end, ",")])
            else:
                self._splice([(eol, eol, "," + nl + member)])
        else:  # trailing commas (JSONC): keep the style
            self._splice([(eol, eol, nl + member + ",")])

    def remove(self, path: KeyPath, key: str) -> str | None:
        """Take `key` out of the object at `path` (absent: nothing); its value's text, verbatim."""
        obj = self._find(path)
        if obj is None or self.plain[obj] != "{":
            return None
        members, close = self._members(obj)
        index = next((i for i in range(len(members) - 1, -1, -1) if members[i].key == key), None)
        if index is None:
            return None
        m = members[index]
        value = self.text[m.start : m.end]
        line = self.text.rfind("\n", 0, m.at) + 1
        own_line = not self.text[line : m.at].strip()
        comma = self._comma_after(m.end)
        last = index == len(members) - 1
        edits: list[tuple[int, int, str]] = []
        if own_line:
            start, end = line, (comma + 1 if comma is not None else m.end)
            eol = self._line_end(end)
            if eol is not None:  # the whole line goes, its line end too
                end = eol + (2 if self.text.startswith("\r\n", eol) else 1 if eol < len(self.text) else 0)
            if last and index > 0 and comma is None:
                before = self._comma_after(members[index - 1].end)
                assert before is not None
                edits.append((before, before + 1, ""))
        elif not last:
            start, end = m.at, members[index + 1].at
        else:
            start, end = (members[index - 1].end if index else m.at), (comma + 1 if comma is not None else m.end)
        edits.append((start, end, ""))
        self._splice(edits)
        _, close = self._members(obj)
        if not self.text[obj + 1 : close].strip() and obj + 1 < close:
            self._splice([(obj + 1, close, "")])  # an object left empty is written `{}`
        return value

    def ensure_object(self, path: KeyPath) -> None:
        """Make the objects along `path` that are missing."""
        for depth in range(len(path)):
            if self._find(path[: depth + 1]) is None:
                self.set(path[:depth], str(path[depth]), {})
        self._object(path)

    # Internals -------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        text = self.text
        plain = " " + text[1:] if text.startswith("\ufeff") else text
        try:
            json.loads(plain)
        except ValueError:
            plain = clean_jsonc(text)  # comments or trailing commas: blank them, offsets unchanged
        self.plain = plain

    def _splice(self, edits: list[tuple[int, int, str]]) -> None:
        for start, end, new in sorted(edits, reverse=True):
            self.text = self.text[:start] + new + self.text[end:]
        self._refresh()

    def _skip(self, i: int) -> int:
        while i < len(self.plain) and self.plain[i] in " \t\r\n":
            i += 1
        return i

    def _find(self, path: KeyPath) -> int | None:
        """Where the value at `path` starts (keys only; the last of a key written twice)."""
        at = self._skip(0)
        if at >= len(self.plain):
            return None
        for part in path:
            if at >= len(self.plain) or self.plain[at] != "{":
                return None
            found = [m for m in self._members(at)[0] if m.key == part]
            if not found:
                return None
            at = found[-1].start
        return at

    def _object(self, path: KeyPath) -> int:
        at = self._find(path)
        if at is None or self.plain[at] != "{":
            got = "nothing" if at is None else json_kind(_DECODER.raw_decode(self.plain, at)[0])
            raise InstallError(
                f"{self.source}: {render(path) or 'the top level'}: expected an object, got {got}; not changed"
            )
        return at

    def _members(self, obj: int) -> tuple[list[_Member], int]:
        """The members of the object starting at `obj` (values skipped at C speed) and its `}`."""
        plain, members = self.plain, []
        i = self._skip(obj + 1)
        while plain[i] != "}":
            key, after = _DECODER.raw_decode(plain, i)
            start = self._skip(self._skip(after) + 1)
            end = _DECODER.raw_decode(plain, start)[1]
            members.append(_Member(key, i, start, end))
            i = self._skip(end)
            if plain[i] == ",":
                i = self._skip(i + 1)
        return members, i

    def _comma_after(self, i: int) -> int | None:
        """The comma after a value at `i`, past whitespace and comments; None if there is none."""
        at = self._past_comments(i, across_lines=True)
        return at if at is not None and at < len(self.text) and self.text[at] == "," else None

    def _line_end(self, i: int) -> int | None:
        """Where the line ends (its `\r\n` or `\n`), if only spaces and comments follow `i` on it."""
        at = self._past_comments(i, across_lines=False)
        return at if at is not None and (at == len(self.text) or self.text.startswith(("\r\n", "\n"), at)) else None

    def _past_comments(self, i: int, across_lines: bool) -> int | None:
        """The first place from `i` that is no space or comment. Not `across_lines`: a `//` comment
        stops it at its line's end, and a `/* */` comment over more than one line gives None."""
        text, n = self.text, len(self.text)
        while i < n:
            if text[i] in (" \t\r\n" if across_lines else " \t"):
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                if not across_lines:
                    return n if end < 0 else end - (text[end - 1] == "\r")
                i = n if end < 0 else end
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if not across_lines and (end < 0 or "\n" in text[i:end]):
                    return None
                i = n if end < 0 else end + 2
            else:
                break
        return i

    def _line_indent(self, i: int) -> str:
        line = self.text.rfind("\n", 0, i) + 1
        return re.match(r"[ \t]*", self.text[line:]).group(0)  # type: ignore[union-attr]

    def _unit(self) -> str:
        """The file's indentation step: its top-level members' indentation."""
        root = self._skip(0)
        if root < len(self.plain) and self.plain[root] == "{":
            for m in self._members(root)[0]:
                indent = self._line_indent(m.at)
                if indent and not self.text[self.text.rfind("\n", 0, m.at) + 1 : m.at].strip():
                    return indent
        return self._default_unit

    def _render(self, value: Any, indent: str) -> str:
        """A value as the clients lay out their files: objects one member a line, lists of plain
        values on one line."""
        if isinstance(value, Raw):
            return str(value)
        flat = not isinstance(value, dict | list) or not value
        if flat or (isinstance(value, list) and not any(isinstance(v, dict | list) for v in value)):
            return json.dumps(value, ensure_ascii=False)
        inner, nl = indent + self._unit(), self.newline
        if isinstance(value, dict):
            items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {self._render(v, inner)}" for k, v in value.items()]
            return "{" + nl + ("," + nl).join(items) + nl + indent + "}"
        items = [inner + self._render(v, inner) for v in value]
        return "[" + nl + ("," + nl).join(items) + nl + indent + "]"
