"""JSON as text: where each value stands (for errors that name a line and column), key paths
written as the config's errors write them, JSON types named, and JSONC (comments, trailing commas)
made plain JSON with every line and column kept. Shared by the config file, pasted snippets and the
clients' own config files, so all three speak of a place the same way."""

from __future__ import annotations

import json
import re
from typing import Any

KeyPath = tuple[str | int, ...]


def scan(text: str) -> tuple[dict[KeyPath, tuple[int, int]], list[KeyPath]]:
    """(key offset, value offset) of every value in `text` (valid JSON) by key path, and the key paths
    written more than once in one object (json.loads keeps the last: so does this)."""
    found: dict[KeyPath, tuple[int, int]] = {}
    duplicates: list[KeyPath] = []
    decoder = json.JSONDecoder()

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\n\r":
            pos += 1
        return pos

    def value(pos: int, path: KeyPath, key_at: int) -> int:
        found[path] = (key_at, pos)
        if text[pos] not in "{[":
            return int(decoder.raw_decode(text, pos)[1])
        closing, index, seen = ("}" if text[pos] == "{" else "]"), 0, set[str]()
        pos = skip(pos + 1)
        while text[pos] != closing:
            if closing == "}":
                key, after = decoder.raw_decode(text, pos)
                if key in seen:
                    duplicates.append((*path, key))
                seen.add(key)
                pos = value(skip(skip(after) + 1), (*path, key), pos)  # skip the ':'
            else:
                pos = value(pos, (*path, index), pos)
                index += 1
            pos = skip(pos)
            if text[pos] == ",":
                pos = skip(pos + 1)
        return pos + 1

    try:
        start = skip(0)
        value(start, (), start)
    except (ValueError, IndexError, RecursionError):
        return {}, []
    return found, duplicates


def render(path: KeyPath) -> str:
    """A key path as the config file's errors write it: `mcpServers.github.args[2]`, `projects["/x"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_:-]+", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset`, counted as the config file's errors count them."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def json_kind(value: Any) -> str:
    """The JSON type name, as the config file's errors say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def clean_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's JSONC) → plain JSON at the same offsets.

    Comments, trailing commas and a byte-order mark become spaces (newlines stay), so a line and
    column json.loads reports are the ones in `text`.
    """
    out = list(text)
    if out and out[0] == "\ufeff":
        out[0] = " "
    i, n, pending_comma = 0, len(text), -1
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            pending_comma, i = -1, j + 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else (end if text[i + 1] == "/" else end + 2)
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if c in "}]" and pending_comma >= 0:
            out[pending_comma] = " "
        if c not in " \t\r\n":
            pending_comma = i if c == "," else -1
        i += 1
    return "".join(out)
