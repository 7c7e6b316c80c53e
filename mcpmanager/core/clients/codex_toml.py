"""Codex's `config.toml`: its `[mcp_servers.NAME]` tables read into mcpmanager's servers (with
`tomllib`), and the text edits install makes (a table appended, `enabled = false` lines), checked
by parsing the result: every other byte of the file stays.

What is read (https://developers.openai.com/codex/mcp, https://developers.openai.com/codex/config-reference):
`command`, `args`, `env`, `cwd` (stdio); `url` (Streamable HTTP, the only remote transport of Codex)
and `http_headers`; `enabled = false` as `disabled`; `startup_timeout_sec` (or the older
`startup_timeout_ms`) as `startTimeout`. What only Codex can resolve is named in a problem and not
read: `env_vars` (variables forwarded from Codex's environment), `bearer_token_env_var` and
`env_http_headers` (header values from Codex's environment). Codex's own settings
(`tool_timeout_sec`, `required`, `enabled_tools`, `disabled_tools`, `tools`, …) are ignored, as
every client's unknown keys.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.names import SERVER_NAME, usable_name
from mcpmanager.core.config.servers import ServerConfig

SECTION = "mcp_servers"
# The line install writes into a server's table to turn it off; undo finds it by this comment.
OFF_LINE = "enabled = false  # turned off by mcpmanager install (mcpmanager install --client codex --undo)"
_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_HEADER = re.compile(r"^[ \t]*\[(?!\[)(?P<key>.*?)\][ \t]*(?:#.*)?$")
_KEY_PART = re.compile(r"[ \t]*(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[A-Za-z0-9_-]+)[ \t]*(?:\.|$)")
ENABLED_LINE = re.compile(r"^[ \t]*enabled[ \t]*=")


class TomlError(Exception):
    """The file does not read as TOML; str() is `<file>:<line>:<column>: invalid TOML: reason`."""


def load(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))  # a byte-order mark stays in the text
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = _AT.search(message)
        where = f"{path}:{at.group(1)}:{at.group(2)}" if at else str(path)
        raise TomlError(f"{where}: invalid TOML: {_AT.sub('', message).strip()}") from None


def servers_of(doc: dict[str, Any]) -> dict[str, Any]:
    value = doc.get(SECTION)
    return value if isinstance(value, dict) else {}


# Reading -----------------------------------------------------------------------------------------


def read_servers(text: str, path: Path) -> tuple[list[ServerConfig], list[str]]:
    """The servers of a Codex config file's text and the problems, one line each naming the file
    (and the line of the server's table, when it has one)."""
    problems: list[str] = []
    try:
        doc = load(text, path)
    except TomlError as exc:
        return [], [str(exc)]
    section = doc.get(SECTION)
    if section is None:
        return [], []
    if not isinstance(section, dict):
        return [], [f"{path}: {SECTION}: expected a table of servers, got {type(section).__name__}"]
    lines = header_lines(text)
    servers: dict[str, ServerConfig] = {}
    for name, entry in section.items():
        where = f"{path}:{lines[name]}" if name in lines else str(path)
        key = f"{SECTION}.{_render_key(name)}"
        server = _server(name, entry, key, where, problems)
        if server is None:
            continue
        if not SERVER_NAME.match(name):
            usable = usable_name(name, {*servers, *section})
            problems.append(
                f"{where}: {key}: not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
                f"imported as {usable!r}"
            )
            server = replace(server, name=usable)
        servers[server.name] = server
    return list(servers.values()), problems


def entries(text: str, path: Path) -> dict[str, ServerConfig]:
    """The servers by their key in the file (as read for import), for install's `--disable-served`."""
    doc = load(text, path)
    found = {}
    for name, entry in servers_of(doc).items():
        server = _server(name, entry, "", "", [])
        if server is not None:
            found[name] = server
    return found


def _server(name: str, entry: Any, key: str, where: str, problems: list[str]) -> ServerConfig | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: {key}: expected a table (server {name!r} not imported)")
        return None
    ours: dict[str, Any] = {k: entry[k] for k in ("command", "args", "env", "cwd", "url") if k in entry}
    if "url" in entry:
        ours["type"] = "http"
        ours.pop("command", None)
    if "http_headers" in entry:
        ours["headers"] = entry["http_headers"]
    if entry.get("enabled") is False:
        ours["disabled"] = True
    if isinstance(entry.get("startup_timeout_sec"), int | float):
        ours["startTimeout"] = entry["startup_timeout_sec"]
    elif isinstance(entry.get("startup_timeout_ms"), int | float):
        ours["startTimeout"] = entry["startup_timeout_ms"] / 1000
    if isinstance(ours.get("env"), dict):  # numbers and booleans as the process gets them
        ours["env"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in ours["env"].items()}
    try:
        config = parse_config(json.dumps({"mcpServers": {"x": ours}}), where)
    except ConfigError as exc:
        problems.append(f"{where}: {key}{exc.key[len('mcpServers.x') :]}: {exc.reason} (server {name!r} not imported)")
        return None
    except (TypeError, ValueError):
        problems.append(f"{where}: {key}: holds values mcpmanager cannot read (server {name!r} not imported)")
        return None
    server = replace(next(iter(config.servers.values())), name=name)
    unread = {
        "env_vars": "variables Codex forwards from its own environment; not read (add them to env in mcpmanager)",
        "bearer_token_env_var": "a bearer token Codex reads from its environment; not read (add an "
        "Authorization header in mcpmanager)",
        "env_http_headers": "header values Codex reads from its environment; not read (add the headers in mcpmanager)",
    }
    for option, what in unread.items():
        if option in entry:
            problems.append(f"{where}: {key}.{option}: {what}")
    return server


# The text ----------------------------------------------------------------------------------------


def _key_parts(key: str) -> list[str] | None:
    parts, at = [], 0
    while at < len(key):
        match = _KEY_PART.match(key, at)
        if match is None or match.end() == at:
            return None
        part = match.group(1)
        parts.append(tomllib.loads(f"k = {part}")["k"] if part[0] in "\"'" else part)
        at = match.end()
    return parts


def _render_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name, ensure_ascii=False)


def tables(text: str) -> list[tuple[list[str], int, int]]:
    """Each `[table]` header: its key, the line (0-based) it is on and the line its table ends
    before (the next header, or the end). `[[arrays]]` end a table too. Only a line that starts
    outside every value is a header: a nested array's line inside a multi-line `args = [` is not."""
    lines = text.splitlines()
    found: list[tuple[list[str], int]] = []
    ends = []
    for number in _header_candidates(lines):
        ends.append(number)
        match = _HEADER.match(lines[number])
        parts = _key_parts(match.group("key")) if match else None
        if parts is not None:
            found.append((parts, number))
    return [(parts, start, next((e for e in ends if e > start), len(lines))) for parts, start in found]


def _header_candidates(lines: list[str]) -> list[int]:
    """The lines starting with `[` outside a value: brackets and braces open in an earlier line's
    value (skipping strings, multi-line strings and comments) make the lines after it part of it."""
    found, depth, open_string = [], 0, ""
    for number, line in enumerate(lines):
        at = 0
        if not open_string and depth == 0 and line.lstrip().startswith("["):
            found.append(number)
            continue  # a header's own brackets are not a value's
        while at < len(line):
            if open_string:
                close = line.find(open_string, at)
                if open_string == '"""':
                    while close > 0 and _escaped(line, close):
                        close = line.find(open_string, close + 1)
                if close < 0:
                    break
                at, open_string = close + len(open_string), ""
                continue
            char = line[at]
            if char == "#":
                break
            if line.startswith(('"""', "'''"), at):
                open_string, at = line[at : at + 3], at + 3
            elif char in "\"'":
                close = at + 1
                while close < len(line) and (line[close] != char or (char == '"' and _escaped(line, close))):
                    close += 1
                at = close + 1
            else:
                depth += (char in "[{") - (char in "]}")
                at += 1
        depth = max(depth, 0)
    return found


def _escaped(line: str, at: int) -> bool:
    """Whether the character at `at` follows an odd number of backslashes."""
    run = 0
    while at - run - 1 >= 0 and line[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def header_lines(text: str) -> dict[str, int]:
    """The line (1-based) of each `[mcp_servers.NAME]` header."""
    return {p[1]: start + 1 for p, start, _ in tables(text) if len(p) == 2 and p[0] == SECTION}


def server_table(text: str, name: str) -> tuple[int, int] | None:
    return next(((s, e) for p, s, e in tables(text) if p == [SECTION, name]), None)


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
