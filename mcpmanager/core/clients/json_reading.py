"""The servers of a client's JSON (or JSONC) file, as the clients read them: the reader of the JSON
layouts' dialects (`json_servers`, `json_switched`), text in, servers and problems out.

How the formats are read:

- Every file is read as JSONC (comments, trailing commas): VS Code's files allow them and reading
  them in the others harms nothing. A file that still does not parse gives one problem; so does an
  unreadable one. An empty file is no servers and no problem (VS Code starts settings.json empty).
- Each entry is validated by `parse_config` (the same rules and messages as mcpmanager's own file).
  An entry that does not read is left out with a problem naming the file, the place and the entry;
  the rest of the file is still read. Unknown keys (`dev`, `gallery`, …) are ignored.
- `disabled: true` (Claude Desktop, Cursor) is kept. VS Code's `type` (`stdio`, `http`, `sse`) is
  read as written. Environment values that are numbers or booleans become strings (the clients pass
  them so); a `null` value (VS Code: unset the variable) cannot be expressed here: left out, with a
  problem.
- `envFile` (VS Code, Cursor) is read when its path can be known outside the client: absolute, `~`
  or `${userHome}`. Values in `env` win over the file's. A path using `${workspaceFolder}` and the
  like, a relative one, or a file that cannot be read gives a problem; the server is still imported.
- `${input:id}` (VS Code asks the user for these when it starts the server; often tokens) cannot be
  resolved here: the server is imported as written and a problem names the entry and the input (with
  its description from `inputs`). Other `${…}` variables (`${env:X}`, `${workspaceFolder}`, Claude
  Code's `${X}`) are also left as written with a problem: mcpmanager does not expand them.
- A server name mcpmanager does not accept (`my server`) is imported under a usable one (`my-server`),
  with a problem saying so. A name written twice in one object: the last one counts (as in the
  client), with a problem.
- Claude Code: user-scope servers (top-level `mcpServers`) come first and keep their names; then
  each project's local-scope servers (`projects.<path>.mcpServers`) in file order. A project server
  whose name is taken by an identical server is the same server (imported once, no problem); by a
  different one, it is imported as `<name>-<project folder>` with a problem, so both are kept.
  (Inside a project Claude Code prefers the local one; mcpmanager is not inside any project, so the
  user-scope server keeps the plain name.)
- What a layout has of its own is data its dialect gives (`Reading`): where its servers are, an
  `inputs` list beside them, each project's servers, a hook for its entries' own keys, variables of its
  own in `env`. Windsurf's `serverUrl`, Gemini CLI's `httpUrl` and `url`, and Copilot CLI's
  `"type": "local"` are read by `own_keys`.
- Zed: `context_servers` in its `settings.json`, each entry read by `zed.read_entry` (the older
  `command: {path, args, env}` form too; `enabled: false` is `disabled`; a Zed extension's server is
  not imported, with a problem). Cline: `mcpServers`, each entry read by `cline.read_entry` (its
  `type` or legacy `transportType`; a URL without either is SSE, as in Cline). LM Studio: Cursor's
  notation, read as Cursor's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcpmanager.core.config.json_text import KeyPath, clean_jsonc, json_kind, line_column, render, scan
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.names import SERVER_NAME, usable_name
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig

_VARIABLE = re.compile(r"\$\{([^}]*)\}")

Problem = Callable[[KeyPath, str], None]  # a key path below the entry, and what is wrong there


@dataclass(frozen=True)
class Reading:
    """What a JSON layout has of its own, as data its dialect gives the reader: where its servers
    are, what stands beside them, and how its entries read as mcpmanager's."""

    section: KeyPath = ("mcpServers",)
    section_of: Callable[[dict[str, Any]], KeyPath] | None = None  # the file itself says where (OpenCode)
    inputs: bool = False  # an `inputs` list beside the section, for `${input:id}` (VS Code)
    projects: bool = False  # each project's `mcpServers` too, after the section (Claude Code's local scope)
    entry: Callable[[dict[str, Any], Problem], dict[str, Any] | None] | None = None  # None: not imported
    env_variables: re.Pattern[str] | None = None  # variables of its own in env values, left as written


PLAIN = Reading()  # Claude Desktop's `mcpServers`: nothing of its own


def read_json(text: str, path: Path, reading: Reading, home: Path) -> tuple[list[ServerConfig], list[str]]:
    """The servers of a client's JSON file's text (`path` names it in the problems) and the problems."""
    reader = _FileReader(path, home)
    servers = reader.read(reading, text)
    return servers, reader.problems


def read_entries(entries: Mapping[str, Any], home: Path, reading: Reading = PLAIN) -> dict[str, ServerConfig]:
    """Client entries read exactly as import reads them (the rules above: scalar env values,
    envFile…), by their key; an entry that does not read is left out. Each is read as a file of
    its own (in memory: a name the reader renames is by itself there). `reading`: the client's
    layout, for its own keys (Windsurf's `serverUrl`, Gemini CLI's `httpUrl`, Zed's and Cline's entries)."""
    found: dict[str, ServerConfig] = {}
    for name, entry in entries.items():
        doc: Any = {name: entry}
        for part in reversed(reading.section):
            doc = {part: doc}
        servers = _FileReader(Path(f"{name}.json"), home).read(reading, json.dumps(doc))
        if servers:
            found[name] = servers[0]
    return found


class _FileReader:
    def __init__(self, path: Path, home: Path) -> None:
        self.path, self.home = path, home
        self.problems: list[str] = []
        self.text = ""
        self.found: dict[KeyPath, tuple[int, int]] = {}
        self.by_key: dict[str, tuple[int, int]] = {}
        self.duplicates: list[KeyPath] = []
        self.reserved: set[str] = set()
        self.inputs: dict[str, str] = {}  # VS Code input id → description
        self.reading = PLAIN

    def problem(self, path: KeyPath, reason: str, *, at_key: bool = False, key: str | None = None) -> None:
        """`<file>[:line:col]: key.path: reason`, like the config file's own errors."""
        rendered = render(path) if key is None else key
        offsets = self.found.get(path) if key is None else self.by_key.get(key)
        where = str(self.path)
        if offsets is not None:
            line, column = line_column(self.text, offsets[0 if at_key else 1])
            where += f":{line}:{column}"
        self.problems.append(f"{where}: {rendered}: {reason}" if rendered else f"{where}: {reason}")

    def read(self, reading: Reading, text: str) -> list[ServerConfig]:
        """The servers of the file's text."""
        self.reading = reading
        doc = self._load(text)
        if doc is None:
            return []
        section = reading.section if reading.section_of is None else reading.section_of(doc)
        if reading.inputs:
            holder: Any = doc
            for depth, part in enumerate(section[:-1]):
                holder = holder.get(part)
                if holder is None:
                    holder = {}
                    break
                if not isinstance(holder, dict):
                    self.problem(section[: depth + 1], f"expected an object, got {json_kind(holder)}")
                    return []
            self._read_inputs(holder.get("inputs"), (*section[:-1], "inputs"))
        sections: list[tuple[KeyPath, str]] = [(section, "")]
        if reading.projects:
            projects = doc.get("projects")
            if isinstance(projects, dict):
                sections += [(("projects", key, "mcpServers"), key) for key in projects]
            elif projects is not None:
                self.problem(("projects",), f"expected an object, got {json_kind(projects)}")
        for duplicate in self.duplicates:  # json.loads kept the last one silently
            if any(duplicate[: len(section)] == section for section, _ in sections):
                self.problem(duplicate, "written twice; the last one is read (as the client does)", at_key=True)
        servers: dict[str, ServerConfig] = {}
        for section, project in sections:
            self._read_section(doc, section, project, servers)
        return list(servers.values())

    def _load(self, text: str) -> dict[str, Any] | None:
        if not text.strip():
            return None
        self.text = clean_jsonc(text)
        try:
            doc = json.loads(self.text)
        except json.JSONDecodeError as exc:
            self.problems.append(f"{self.path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}")
            return None
        except RecursionError:
            self.problem((), "invalid JSON: nested too deeply")
            return None
        if not isinstance(doc, dict):
            self.problem((), f"expected a JSON object at the top level, got {json_kind(doc)}")
            return None
        self.found, self.duplicates = scan(self.text)
        self.by_key = {render(path): offsets for path, offsets in self.found.items()}
        return doc

    def _read_inputs(self, inputs: Any, path: KeyPath) -> None:
        if not isinstance(inputs, list):
            return
        for item in inputs:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                description = item.get("description")
                self.inputs[item["id"]] = description if isinstance(description, str) else ""

    def _read_section(
        self, doc: dict[str, Any], section: KeyPath, project: str, servers: dict[str, ServerConfig]
    ) -> None:
        value: Any = doc
        for part in section:
            if not isinstance(value, dict) or part not in value:
                return
            value = value[part]
        if not isinstance(value, dict):
            self.problem(section, f"expected an object of servers, got {json_kind(value)}")
            return
        self.reserved = set(value)  # a made-up name must not take one written later in the same object
        for name, entry in value.items():
            server = self._read_entry(section, name, entry)
            if server is not None:
                self._add(servers, server, section, project)

    def _read_entry(self, section: KeyPath, name: str, entry: Any) -> ServerConfig | None:
        path = (*section, name)
        own = self.reading.entry
        if isinstance(entry, dict) and own is not None:
            entry = own(entry, lambda key, reason: self.problem((*path, *key), reason))
            if entry is None:
                return None
        if isinstance(entry, dict):
            entry = self._normalise(path, entry)
        try:
            config = parse_config(json.dumps({"mcpServers": {name: entry}}), str(self.path))
        except ConfigError as exc:
            # The key path in the file: `mcpServers.<name>…` becomes this section's path.
            rest = exc.key[len("mcpServers") :]
            key = render(section) + rest
            self.problem(
                (), f"{exc.reason} (server {name!r} not imported)", key=key, at_key=exc.reason.startswith("server name")
            )
            return None
        server = next(iter(config.servers.values()))
        self._variables(path, server)
        return server

    def _normalise(self, path: KeyPath, entry: dict[str, Any]) -> dict[str, Any]:
        """What the clients accept beyond mcpmanager's format: scalar env values, `envFile`."""
        entry = dict(entry)
        env = entry.get("env")
        if isinstance(env, dict):
            kept: dict[str, Any] = {}
            for key, value in env.items():
                if value is None:
                    self.problem((*path, "env", key), "null (unset the variable) is not supported here; left out")
                elif isinstance(value, bool):
                    kept[key] = "true" if value else "false"
                elif isinstance(value, int | float):
                    kept[key] = json.dumps(value)
                else:
                    kept[key] = value
            entry["env"] = kept
        env_file = entry.get("envFile")
        if isinstance(env_file, str) and ("command" in entry or entry.get("type") == "stdio"):
            from_file = self._env_file(path, env_file)
            written = entry.get("env")
            if from_file:
                entry["env"] = {**from_file, **(written if isinstance(written, dict) else {})}
        elif env_file is not None:
            self.problem((*path, "envFile"), "expected a path (a string) to a file of KEY=VALUE lines")
        return entry

    def _env_file(self, path: KeyPath, written: str) -> dict[str, str]:
        where = (*path, "envFile")
        resolved = written.replace("${userHome}", str(self.home))
        if resolved == "~" or resolved.startswith(("~/", "~\\")):
            resolved = str(self.home) + resolved[1:]
        if "${" in resolved:
            self.problem(where, "uses a variable only the client can resolve; not read (add its variables to env)")
            return {}
        file = Path(resolved)
        if not file.is_absolute():
            self.problem(where, "a relative path: the client resolves it from where it runs; not read")
            return {}
        try:
            lines = file.read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
            self.problem(where, f"cannot read {file}: {reason}")
            return {}
        values: dict[str, str] = {}
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, equals, value = line.removeprefix("export ").partition("=")
            key, value = key.strip(), value.strip()
            if not equals or not key:
                self.problem(where, f"{file} line {number} is not KEY=VALUE; skipped")
                continue
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            values[key] = value
        return values

    def _variables(self, path: KeyPath, server: ServerConfig) -> None:
        """Problems for `${…}` left in the server (inputs first: they are what a user must supply)."""
        if isinstance(server, StdioServerConfig):
            texts = [server.command, *server.args, *server.env.values(), server.cwd or ""]
        else:
            texts = [server.url, *server.headers.values()]
        names = list(dict.fromkeys(m.group(1) for text in texts for m in _VARIABLE.finditer(text)))
        inputs = [n.removeprefix("input:") for n in names if n.startswith("input:")]
        others = [f"${{{n}}}" for n in names if not n.startswith("input:")]
        for input_id in inputs:
            if input_id not in self.inputs:
                about = " (not declared in inputs)"
            else:
                about = f" ({self.inputs[input_id]})" if self.inputs[input_id] else ""
            self.problem(
                path,
                f"needs input {input_id!r}{about}, which the client asks for when it starts the server; "
                "imported as written: enter the value in mcpmanager",
            )
        own = self.reading.env_variables
        if own is not None and isinstance(server, StdioServerConfig):
            env = server.env.values()
            others += list(dict.fromkeys(m.group(0) for text in env for m in own.finditer(text)))
        if others:
            self.problem(path, f"uses {', '.join(others)}: left as written (mcpmanager does not expand them)")

    def _add(self, servers: dict[str, ServerConfig], server: ServerConfig, section: KeyPath, project: str) -> None:
        path = (*section, server.name)
        name = server.name
        if not SERVER_NAME.match(name):
            name = usable_name(name, {*servers, *self.reserved})
            reason = f"not a name mcpmanager accepts (letters, digits, '-', '_', '.'); imported as {name!r}"
            self.problem(path, reason, at_key=True)
        elif name in servers:
            if servers[name] == server:
                return  # the same server configured in two scopes
            owner = re.sub(r"[^A-Za-z0-9_.-]+", "-", re.split(r"[\\/]", project.rstrip("\\/"))[-1]).strip("-.")
            name = usable_name(f"{server.name}-{owner or 'project'}", servers)
            self.problem(path, f"another {server.name!r} is configured already; imported as {name!r}", at_key=True)
        servers[name] = server if name == server.name else replace(server, name=name)
