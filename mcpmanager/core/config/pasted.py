"""Servers from pasted JSON: whatever shape people copy out of a client's config or a README.

Accepted, in this order of recognition:

- a whole client file: `{"mcpServers": {…}}` (Claude Desktop, Cursor, Claude Code), `{"servers": {…}}`
  (VS Code's mcp.json, entries may say `"type"`), `{"mcp": {"servers": {…}}}` (VS Code's settings.json);
- one server as a bare entry `{"command": …}` or `{"url": …}`: it needs a name (the `name` argument);
- a bare map of entries `{"github": {"command": …}}`;
- any of these without the outer braces, as README fragments are copied (`"github": {…},`).

The text may have comments and trailing commas (JSONC) and a Markdown code fence around it. Every
entry is validated by `parse_config`, so the messages are the config file's own, with line and column
in the pasted text. Nothing is dropped: a duplicate key or an entry that does not read is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NoReturn

from mcpmanager.core.config.json_text import KeyPath, clean_jsonc, json_kind, line_column, render, scan
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.servers import ServerConfig

SOURCE = "pasted text"
# Where the server map of each known file shape sits.
_SERVER_MAPS: tuple[KeyPath, ...] = (("mcpServers",), ("servers",), ("mcp", "servers"))
_ENTRY_KEYS = ("command", "url", "type")
_SHAPES = '{"mcpServers": {…}}, {"servers": {…}}, "name": {"command": …} or one server {"command": …}'
_FENCE = re.compile(r"^[ \t]*(```|~~~)[\w+-]*[ \t]*$", re.MULTILINE)


class SnippetError(ValueError):
    """Pasted text that gives no servers; str() is one line a user can act on.

    `needs_name` is set when the text is one valid-looking server without a name: parse it again
    with `name=`.
    """

    def __init__(
        self,
        reason: str,
        *,
        key: str = "",
        line: int | None = None,
        column: int | None = None,
        needs_name: bool = False,
    ) -> None:
        self.reason, self.key, self.line, self.column, self.needs_name = reason, key, line, column, needs_name
        where = SOURCE if line is None else f"{SOURCE}:{line}:{column}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


def parse_snippet(text: str, name: str | None = None) -> list[ServerConfig]:
    """The servers in `text`, in the order written; `name` names a pasted bare entry."""
    raw = _FENCE.sub(lambda m: " " * len(m.group()), text)  # blanked, not cut: positions stay
    if not raw.strip():
        raise SnippetError("nothing to read: the pasted text is empty")
    doc, clean, shift = _load(raw)
    if not isinstance(doc, dict):
        raise SnippetError(f"no servers found in the pasted text: expected {_SHAPES}, got {json_kind(doc)}")
    found, duplicates = scan(clean)
    maps = [path for path in _SERVER_MAPS if _has(doc, path)]
    if maps:
        servers: dict[str, tuple[KeyPath, ServerConfig]] = {}
        for path in maps:
            if not isinstance(_get(doc, path), dict):
                _fail(
                    raw, clean, shift, found, path, f"expected an object of servers, got {json_kind(_get(doc, path))}"
                )
            for server in _validate(raw, clean, shift, found, duplicates, path):
                if server.name in servers:
                    other = render(servers[server.name][0])
                    _fail(raw, clean, shift, found, (*path, server.name), f"also defined in {other}", at_key=True)
                servers[server.name] = (path, server)
        if not servers:
            where = " and ".join(render(path) for path in maps)
            raise SnippetError(f"no servers found in the pasted text: its {where} is empty")
        return [server for _, server in servers.values()]
    if any(key in doc and not isinstance(doc[key], dict) for key in _ENTRY_KEYS):
        if not name:
            raise SnippetError(
                'this is one server without a name: give it a name, or paste it as "name": {…}', needs_name=True
            )
        return _validate(raw, clean, shift, found, duplicates, (), name=name)
    if any(isinstance(value, dict) for value in doc.values()):
        return _validate(raw, clean, shift, found, duplicates, ())
    keys = ", ".join(str(k) for k in list(doc)[:5]) or "none"
    raise SnippetError(f"no servers found in the pasted text: expected {_SHAPES} (its keys: {keys})")


def _load(raw: str) -> tuple[Any, str, int]:
    """(document, cleaned text it was read from, offset of the pasted text inside that text)."""
    clean = clean_jsonc(raw)
    try:
        return json.loads(clean), clean, 0
    except json.JSONDecodeError as direct:
        if not raw.lstrip().startswith('"'):
            _syntax(raw, direct.msg, direct.pos)
    except RecursionError:
        raise SnippetError("invalid JSON: nested too deeply") from None
    # A fragment copied without its braces: `"github": {…},`. The trailing comma is removed by the
    # JSONC cleaning once the closing brace is there.
    wrapped = clean_jsonc("{" + raw + "\n}")
    try:
        return json.loads(wrapped), wrapped, 1
    except json.JSONDecodeError as exc:
        _syntax(raw, exc.msg, min(max(exc.pos - 1, 0), len(raw)))
    except RecursionError:
        raise SnippetError("invalid JSON: nested too deeply") from None


def _syntax(raw: str, message: str, offset: int) -> NoReturn:
    line, column = line_column(raw, offset)
    raise SnippetError(f"invalid JSON: {message}", line=line, column=column) from None


def _validate(
    raw: str,
    clean: str,
    shift: int,
    found: dict[KeyPath, tuple[int, int]],
    duplicates: list[KeyPath],
    path: KeyPath,
    name: str | None = None,
) -> list[ServerConfig]:
    """Read the server map (or, with `name`, the one entry) at `path` through `parse_config`.

    The validated document is the pasted map's own text inside `{"mcpServers": …}`, so a position
    parse_config reports maps back onto the pasted text.
    """
    for duplicate in duplicates:
        if duplicate[: len(path)] == path:
            what = f"server {duplicate[-1]!r}" if name is None and len(duplicate) == len(path) + 1 else "key"
            reason = f"{what} appears twice; keep one (the paste would lose the other)"
            _fail(raw, clean, shift, found, duplicate, reason, at_key=True)
    start = found[path][1]
    end = json.JSONDecoder().raw_decode(clean, start)[1]
    head = '{"mcpServers": ' if name is None else '{"mcpServers": {' + json.dumps(name) + ": "
    body = clean[start:end]
    try:
        config = parse_config(head + body + ("}" if name is None else "}}"), SOURCE)
    except ConfigError as exc:
        # `mcpServers…` in the error is `path…` in the pasted text (without the name we gave it).
        rest = exc.key[len("mcpServers") :]
        if name is not None:  # drop the name segment (`.name` or `["a name"]`): it was never pasted
            rest = rest[len(render(("x", name))) - 1 :]
        key = render(path) + rest if path else rest.removeprefix(".")
        line = column = None
        if exc.line is not None and exc.column is not None:
            inside = _offset(head + body, exc.line, exc.column) - len(head)
            if 0 <= inside < len(body):
                line, column = line_column(raw, min(inside + start - shift, len(raw)))
        raise SnippetError(exc.reason, key=key, line=line, column=column) from None
    return list(config.servers.values())


def _fail(
    raw: str,
    clean: str,
    shift: int,
    found: dict[KeyPath, tuple[int, int]],
    path: KeyPath,
    reason: str,
    *,
    at_key: bool = False,
) -> NoReturn:
    line = column = None
    if path in found:
        offset = found[path][0 if at_key else 1] - shift
        line, column = line_column(raw, min(max(offset, 0), len(raw)))
    raise SnippetError(reason, key=render(path), line=line, column=column)


def _has(doc: dict[str, Any], path: KeyPath) -> bool:
    value: Any = doc
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True


def _get(doc: dict[str, Any], path: KeyPath) -> Any:
    value: Any = doc
    for part in path:
        value = value[part]
    return value


# Positions in the pasted text -----------------------------------------------------------


def _offset(text: str, line: int, column: int) -> int:
    lines: Iterator[int] = (i for i, c in enumerate(text) if c == "\n")
    start = 0
    for _ in range(line - 1):
        start = next(lines, len(text)) + 1
    return start + column - 1
