"""Reading the config file: everything validated, errors that name the file, the key path and, when
it can be found, the line and column (`<file>:3:15: mcpServers.github.args: expected an array…`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from mcpmanager.core.config import options
from mcpmanager.core.config.json_text import KeyPath, json_kind, render, scan
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.servers import (
    SERVER_TYPES,
    HttpServerConfig,
    OAuthSettings,
    ServerConfig,
    StdioServerConfig,
)
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings, is_tool_key

T = TypeVar("T")


def load_config(path: Path) -> Config:
    """Read and validate `path`. A missing file is an empty config (first run). Never writes."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return config_from_bytes(data, str(path))


def config_from_bytes(data: bytes, source: str) -> Config:
    """Validate a config file's bytes; `source` names it in errors."""
    try:
        text = data.decode("utf-8-sig")  # Windows editors may add a BOM
    except UnicodeDecodeError as exc:
        raise ConfigError(source, f"not UTF-8 text (bad byte at offset {exc.start})") from None
    return parse_config(text, source)


def parse_config(text: str, source: str) -> Config:
    """Validate a config document; `source` names it in errors."""
    if not text.strip():
        raise ConfigError(source, "file is empty (expected a JSON object)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(source, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise ConfigError(source, "invalid JSON: nested too deeply") from None
    r = _Reader(text, source)
    if not isinstance(doc, dict):
        r.fail((), f"expected a JSON object at the top level, got {json_kind(doc)}")
    servers = {name: _read_server(r, name, entry) for name, entry in r.section(doc, "mcpServers").items()}
    tools = {key: _read_tool(r, key, entry) for key, entry in r.section(doc, "tools").items()}
    synonyms = {
        word: r.check(words, ("synonyms", word), options.strings) for word, words in r.section(doc, "synonyms").items()
    }
    proxy = options.read_options(ProxySettings, r.section(doc, "proxy"), ("proxy",), r.fail)
    supervisor = options.read_options(SupervisorSettings, r.section(doc, "supervisor"), ("supervisor",), r.fail)
    return Config(servers, tools, synonyms, proxy, supervisor, doc)


def _read_server(r: _Reader, name: str, value: Any) -> ServerConfig:
    path: KeyPath = ("mcpServers", name)
    if not name:
        r.fail(path, "server name must not be empty", at_key=True)
    entry = r.check(value, path, options.obj)
    if "type" in entry:
        declared = r.check(entry["type"], (*path, "type"), options.string)
        if declared not in SERVER_TYPES:
            r.fail((*path, "type"), f"unknown server type {declared!r} (expected stdio, http or sse)")
        kind = SERVER_TYPES[declared]
        needed = "command" if kind == "stdio" else "url"
        if needed not in entry:
            r.fail(path, f'type {declared!r} needs "{needed}"')
    elif "command" in entry:
        kind = "stdio"
    elif "url" in entry:
        kind = "http"
    else:
        r.fail(path, 'needs "command" (stdio) or "url" (http)')
    disabled = r.opt(entry, path, "disabled", options.flag, False)
    start_timeout = r.opt(entry, path, "startTimeout", options.positive_or_null, None)
    roots = r.opt(entry, path, "roots", options.roots, None)
    if kind == "stdio":
        return StdioServerConfig(
            name=name,
            command=r.check(entry["command"], (*path, "command"), options.nonempty),
            args=r.opt(entry, path, "args", options.strings, []),
            env=r.opt(entry, path, "env", options.string_map, {}),
            cwd=r.opt(entry, path, "cwd", options.string_or_null, None),
            disabled=disabled,
            start_timeout=start_timeout,
            roots=roots,
        )
    url = r.check(entry["url"], (*path, "url"), options.nonempty)
    if not re.match(r"https?://", url, re.IGNORECASE):
        r.fail((*path, "url"), "expected an http:// or https:// URL")
    return HttpServerConfig(
        name=name,
        url=url,
        headers=r.opt(entry, path, "headers", options.string_map, {}),
        disabled=disabled,
        transport="sse" if kind == "sse" else "http",
        start_timeout=start_timeout,
        roots=roots,
        oauth=_read_oauth(r, entry, path) if "oauth" in entry else None,
    )


def _read_oauth(r: _Reader, entry: dict[str, Any], path: KeyPath) -> OAuthSettings:
    path = (*path, "oauth")
    oauth = r.check(entry["oauth"], path, options.obj)
    return OAuthSettings(
        client_id=r.opt(oauth, path, "clientId", options.string_or_null, None),
        client_secret=r.opt(oauth, path, "clientSecret", options.string_or_null, None),
        scopes=tuple(r.opt(oauth, path, "scopes", options.strings, [])),
        redirect_port=r.opt(oauth, path, "redirectPort", options.integer(1, 65535), None),
    )


def _read_tool(r: _Reader, key: str, value: Any) -> ToolSettings:
    path: KeyPath = ("tools", key)
    if not is_tool_key(key):
        r.fail(path, "key must be 'server:tool'", at_key=True)
    return options.read_options(ToolSettings, r.check(value, path, options.obj), path, r.fail)


class _Reader:
    """Checks that fail with the key path and, when it can be found, the line and column."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source

    def fail(self, path: KeyPath, reason: str, *, at_key: bool = False) -> NoReturn:
        line = column = None
        offsets = scan(self.text)[0].get(path)  # only on failure: loading pays nothing for it
        if offsets is not None:
            offset = offsets[0] if at_key else offsets[1]
            line = self.text.count("\n", 0, offset) + 1
            column = offset - self.text.rfind("\n", 0, offset)
        raise ConfigError(self.source, reason, key=render(path), line=line, column=column)

    def check(self, value: Any, path: KeyPath, check: Callable[[Any], T]) -> T:
        try:
            return check(value)
        except options.Invalid as exc:
            self.fail((*path, *exc.at), exc.reason)

    def opt(self, entry: dict[str, Any], path: KeyPath, key: str, check: Callable[[Any], T], default: T) -> T:
        return self.check(entry[key], (*path, key), check) if key in entry else default

    def section(self, doc: dict[str, Any], key: str) -> dict[str, Any]:
        return self.check(doc[key], (key,), options.obj) if key in doc else {}
