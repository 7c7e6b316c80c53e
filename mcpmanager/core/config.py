"""The config file: typed settings, validation with precise errors, lossless atomic saves.

One JSON document, Claude-Desktop compatible at the top (`mcpServers`), mcpmanager's own sections
(`tools`, `synonyms`, `proxy`, `supervisor`) beside it. Everything read is validated; the parsed
document is kept in `Config.document` so keys mcpmanager does not know survive a save.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeAlias, TypeVar

from mcpmanager.core.atomic_write import write_atomic
from mcpmanager.core.json_text import KeyPath, json_kind, render, scan

ProxyMode = Literal["discovery", "direct"]
HttpTransport = Literal["http", "sse"]
T = TypeVar("T")

# Accepted "type" values (Claude Desktop, VS Code and Cursor spellings) → transport.
_SERVER_TYPES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_TRANSPORT_KEYS = ("type", "command", "args", "env", "cwd", "url", "headers")
# The names mcpmanager gives servers it adds (the window, imports): safe in exposed tool names
# (`<server>__<tool>`), file names and menus. A config file may hold others; they are kept.
SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class StdioServerConfig:
    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict, repr=False)  # tokens: keep them out of logs
    cwd: str | None = None
    disabled: bool = False
    start_timeout: float | None = None  # None: the supervisor's startTimeout


@dataclass(frozen=True)
class HttpServerConfig:
    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # tokens: keep them out of logs
    disabled: bool = False
    transport: HttpTransport = "http"  # "http" is Streamable HTTP
    start_timeout: float | None = None


ServerConfig: TypeAlias = StdioServerConfig | HttpServerConfig


@dataclass(frozen=True)
class ToolSettings:
    """Settings of one tool, keyed `server:original_name` in `Config.tools`."""

    always_on: bool = False
    aliases: list[str] = field(default_factory=list)
    disabled: bool = False
    params: dict[str, str] = field(default_factory=dict)  # argument name a model may pass → declared name


@dataclass(frozen=True)
class ProxySettings:
    mode: ProxyMode = "discovery"
    port: int = 0  # 0: any free port
    max_name_length: int = 64


@dataclass(frozen=True)
class SupervisorSettings:
    """Seconds unless named otherwise; JSON keys are the camelCase field names."""

    start_timeout: float = 30.0
    call_timeout: float = 300.0
    starting_wait: float = 30.0
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    crash_limit: int = 5
    crash_window: float = 60.0
    healthy_after: float = 300.0
    stop_grace: float = 2.0
    log_max_bytes: int = 1048576
    ring_lines: int = 2000


@dataclass(frozen=True)
class Config:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    tools: dict[str, ToolSettings] = field(default_factory=dict)
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    proxy: ProxySettings = field(default_factory=ProxySettings)
    supervisor: SupervisorSettings = field(default_factory=SupervisorSettings)
    # The whole JSON document, unknown keys included. Derived from the fields above plus what was
    # read, so it takes no part in equality.
    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def with_server(self, server: ServerConfig) -> Config:
        """Add `server`, or replace the one of the same name in its place."""
        return self._changed(servers={**self.servers, server.name: server})

    def without_server(self, name: str) -> Config:
        """Remove a server (KeyError if absent); its tool settings stay for when it comes back."""
        if name not in self.servers:
            raise KeyError(name)
        return self._changed(servers={k: v for k, v in self.servers.items() if k != name})

    def with_servers(self, servers: dict[str, ServerConfig], tools: dict[str, ToolSettings]) -> Config:
        """Every server and tool setting at once (a rename moves a server's settings with it)."""
        return self._changed(servers=dict(servers), tools=dict(tools))

    def with_tool_settings(self, key: str, settings: ToolSettings) -> Config:
        if not _is_tool_key(key):
            raise ValueError(f"tool settings key must be 'server:tool', got {key!r}")
        return self._changed(tools={**self.tools, key: settings})

    def enabled_servers(self) -> list[ServerConfig]:
        return [server for server in self.servers.values() if not server.disabled]

    def _changed(self, **changes: Any) -> Config:
        config = replace(self, **changes)
        return replace(config, document=_document(config))


class ConfigError(ValueError):
    """An unreadable or invalid config file. str() is one line: `<file>[:line:col]: [key.path: ]reason`."""

    def __init__(
        self, source: str, reason: str, *, key: str = "", line: int | None = None, column: int | None = None
    ) -> None:
        self.source, self.reason, self.key, self.line, self.column = source, reason, key, line, column
        where = source if line is None else f"{source}:{line}:{column}"
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


# Loading ------------------------------------------------------------------------------------------


def load_config(path: Path) -> Config:
    """Read and validate `path`. A missing file is an empty config (first run). Never writes."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")  # Windows editors may add a BOM
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"not UTF-8 text (bad byte at offset {exc.start})") from None
    return parse_config(text, str(path))


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
    synonyms = {word: r.strings(words, ("synonyms", word)) for word, words in r.section(doc, "synonyms").items()}
    return Config(servers, tools, synonyms, _read_proxy(r, doc), _read_supervisor(r, doc), doc)


def _read_server(r: _Reader, name: str, value: Any) -> ServerConfig:
    path: KeyPath = ("mcpServers", name)
    if not name:
        r.fail(path, "server name must not be empty", at_key=True)
    entry = r.obj(value, path)
    if "type" in entry:
        declared = r.string(entry["type"], (*path, "type"))
        if declared not in _SERVER_TYPES:
            r.fail((*path, "type"), f"unknown server type {declared!r} (expected stdio, http or sse)")
        kind = _SERVER_TYPES[declared]
        needed = "command" if kind == "stdio" else "url"
        if needed not in entry:
            r.fail(path, f'type {declared!r} needs "{needed}"')
    elif "command" in entry:
        kind = "stdio"
    elif "url" in entry:
        kind = "http"
    else:
        r.fail(path, 'needs "command" (stdio) or "url" (http)')
    disabled = r.opt(entry, path, "disabled", r.flag, False)
    start_timeout = r.opt(entry, path, "startTimeout", r.positive_or_null, None)
    if kind == "stdio":
        return StdioServerConfig(
            name=name,
            command=r.nonempty(entry["command"], (*path, "command")),
            args=r.opt(entry, path, "args", r.strings, []),
            env=r.opt(entry, path, "env", r.string_map, {}),
            cwd=r.opt(entry, path, "cwd", r.string_or_null, None),
            disabled=disabled,
            start_timeout=start_timeout,
        )
    url = r.nonempty(entry["url"], (*path, "url"))
    if not re.match(r"https?://", url, re.IGNORECASE):
        r.fail((*path, "url"), "expected an http:// or https:// URL")
    return HttpServerConfig(
        name=name,
        url=url,
        headers=r.opt(entry, path, "headers", r.string_map, {}),
        disabled=disabled,
        transport="sse" if kind == "sse" else "http",
        start_timeout=start_timeout,
    )


def _read_tool(r: _Reader, key: str, value: Any) -> ToolSettings:
    path: KeyPath = ("tools", key)
    if not _is_tool_key(key):
        r.fail(path, "key must be 'server:tool'", at_key=True)
    entry = r.obj(value, path)
    return ToolSettings(
        always_on=r.opt(entry, path, "alwaysOn", r.flag, False),
        aliases=r.opt(entry, path, "aliases", r.strings, []),
        disabled=r.opt(entry, path, "disabled", r.flag, False),
        params=r.opt(entry, path, "params", r.string_map, {}),
    )


def _read_proxy(r: _Reader, doc: dict[str, Any]) -> ProxySettings:
    section, path = r.section(doc, "proxy"), ("proxy",)
    return ProxySettings(
        mode=r.opt(section, path, "mode", r.mode, "discovery"),
        port=r.opt(section, path, "port", lambda v, p: r.integer(v, p, 0, 65535), 0),
        max_name_length=r.opt(section, path, "maxNameLength", lambda v, p: r.integer(v, p, 16, 128), 64),
    )


def _read_supervisor(r: _Reader, doc: dict[str, Any]) -> SupervisorSettings:
    section, values = r.section(doc, "supervisor"), dict[str, Any]()
    for f in fields(SupervisorSettings):
        key = _camel(f.name)
        if key in section:
            # Counts and sizes are integers (their defaults say which); durations any positive number.
            read = r.count if isinstance(f.default, int) else r.positive
            values[f.name] = read(section[key], ("supervisor", key))
    return SupervisorSettings(**values)


class _Reader:
    """Type checks that fail with the key path and, when it can be found, the line and column."""

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

    def opt(self, entry: dict[str, Any], path: KeyPath, key: str, read: Callable[[Any, KeyPath], T], default: T) -> T:
        return read(entry[key], (*path, key)) if key in entry else default

    def obj(self, value: Any, path: KeyPath) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {json_kind(value)}")
        return value

    def section(self, doc: dict[str, Any], key: str) -> dict[str, Any]:
        return self.obj(doc[key], (key,)) if key in doc else {}

    def string(self, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {json_kind(value)}")
        return value

    def nonempty(self, value: Any, path: KeyPath) -> str:
        if not self.string(value, path):
            self.fail(path, "must not be empty")
        return str(value)

    def string_or_null(self, value: Any, path: KeyPath) -> str | None:
        return None if value is None else self.string(value, path)

    def strings(self, value: Any, path: KeyPath) -> list[str]:
        if not isinstance(value, list):
            self.fail(path, f"expected an array of strings, got {json_kind(value)}")
        return [self.string(item, (*path, i)) for i, item in enumerate(value)]

    def string_map(self, value: Any, path: KeyPath) -> dict[str, str]:
        return {key: self.string(item, (*path, key)) for key, item in self.obj(value, path).items()}

    def flag(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {json_kind(value)}")
        return value

    def positive(self, value: Any, path: KeyPath) -> float:
        if not (_is_number(value) and math.isfinite(value) and value > 0):
            self.fail(path, f"expected a positive number, got {_show(value)}")
        return float(value)

    def positive_or_null(self, value: Any, path: KeyPath) -> float | None:
        return None if value is None else self.positive(value, path)

    def integer(self, value: Any, path: KeyPath, low: int, high: int) -> int:
        if not (_is_number(value) and isinstance(value, int) and low <= value <= high):
            self.fail(path, f"expected an integer {low}..{high}, got {_show(value)}")
        return value

    def count(self, value: Any, path: KeyPath) -> int:
        if not (_is_number(value) and isinstance(value, int) and value > 0):
            self.fail(path, f"expected a positive integer, got {_show(value)}")
        return value

    def mode(self, value: Any, path: KeyPath) -> ProxyMode:
        if value == "discovery":
            return "discovery"
        if value == "direct":
            return "direct"
        got = repr(value) if isinstance(value, str) else json_kind(value)
        self.fail(path, f"expected 'discovery' or 'direct', got {got}")


def _show(value: Any) -> str:
    """A number as written (ranges are about the value); anything else by its type."""
    return json.dumps(value) if _is_number(value) else json_kind(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_tool_key(key: str) -> bool:
    server, _, tool = key.partition(":")
    return bool(server and tool)


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


# Saving -------------------------------------------------------------------------------------------


def save_config(config: Config, path: Path) -> None:
    """Write `config` atomically, keeping the previous file as `<name>.bak`.

    The typed sections are merged into a copy of `config.document`: unknown keys are kept and values
    that did not change stay as the user wrote them. A new file is private (it holds tokens); an
    existing one keeps its mode. Saving what is already on disk touches nothing.
    """
    path = Path(os.path.realpath(path))  # through a symlink (dotfiles), replace the target, not the link
    data = (json.dumps(_document(config), indent=2, ensure_ascii=False) + "\n").encode()
    try:
        previous: bytes | None = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        previous, mode = None, 0o600
    if previous == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if previous is not None:
        write_atomic(path.with_name(path.name + ".bak"), previous, mode)
    write_atomic(path, data, mode)


def _document(config: Config) -> dict[str, Any]:
    """`config.document` with the typed fields written in."""
    doc = copy.deepcopy(config.document)
    old_servers = _dict(doc.get("mcpServers"))
    doc["mcpServers"] = {
        name: _server_entry(server, _dict(old_servers.get(name))) for name, server in config.servers.items()
    }
    old_tools, tools = _dict(doc.get("tools")), {}
    for key, settings in config.tools.items():
        entry = _dict(old_tools.get(key))
        _put(entry, "alwaysOn", settings.always_on, False)
        _put(entry, "aliases", settings.aliases, [])
        _put(entry, "disabled", settings.disabled, False)
        _put(entry, "params", settings.params, {})
        if entry or key in old_tools:  # no empty entry for a tool reset to defaults
            tools[key] = entry
    _put(doc, "tools", tools, {})
    _put(doc, "synonyms", config.synonyms, {})
    proxy = _dict(doc.get("proxy"))
    _put(proxy, "mode", config.proxy.mode, "discovery")
    _put(proxy, "port", config.proxy.port, 0)
    _put(proxy, "maxNameLength", config.proxy.max_name_length, 64)
    _put(doc, "proxy", proxy, {})
    supervisor = _dict(doc.get("supervisor"))
    for f in fields(SupervisorSettings):
        _put(supervisor, _camel(f.name), _num(getattr(config.supervisor, f.name)), f.default)
    _put(doc, "supervisor", supervisor, {})
    return doc


def _server_entry(server: ServerConfig, old: dict[str, Any]) -> dict[str, Any]:
    kind = "stdio" if isinstance(server, StdioServerConfig) else server.transport
    entry = dict(old)
    if _entry_kind(old) != kind:
        # New, or its transport changed: the old transport's keys would mislead the next load.
        for key in _TRANSPORT_KEYS:
            entry.pop(key, None)
        if kind != "stdio":
            entry["type"] = kind  # explicit for new remote servers, as VS Code and Cursor expect
    if isinstance(server, StdioServerConfig):
        _put(entry, "command", server.command)
        _put(entry, "args", server.args, [])
        _put(entry, "env", server.env, {})
        _put(entry, "cwd", server.cwd)
    else:
        _put(entry, "url", server.url)
        _put(entry, "headers", server.headers, {})
    _put(entry, "disabled", server.disabled, False)
    _put(entry, "startTimeout", _num(server.start_timeout))
    return entry


def _entry_kind(entry: dict[str, Any]) -> str | None:
    """The transport an entry on disk declares, as loading would read it (None: no entry)."""
    declared = entry.get("type")
    if isinstance(declared, str) and declared in _SERVER_TYPES:
        return _SERVER_TYPES[declared]
    if "command" in entry:
        return "stdio"
    return "http" if "url" in entry else None


def _put(entry: dict[str, Any], key: str, value: Any, default: Any = None) -> None:
    """Set `key` only when it changes; an absent key stays absent while `value` is the default."""
    if key in entry and entry[key] == value:
        return  # unchanged: keep it as written (30 stays 30, not 30.0)
    if value is None or (key not in entry and value == default):
        entry.pop(key, None)
    else:
        entry[key] = copy.deepcopy(value)  # the document must not share lists/dicts with the dataclasses


def _num(value: float | None) -> float | None:
    """Whole numbers written as integers: `"startTimeout": 45`, not 45.0."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
