"""Goose's `config.yaml`: its `extensions` read into mcpmanager's servers, a server written as a Goose
extension (`extension_of`, for install and export), and the text edits install makes.

Goose (Block's open-source agent; its CLI and desktop app share the file) keeps every setting in
`config.yaml`, with an `extensions` mapping of key → extension
(https://block.github.io/goose/docs/guides/config-files, aaif-goose/goose
`documentation/docs/guides/config-files.md` and `crates/goose/src/agents/extension.rs`):

- `type: stdio`: `cmd`, `args`, `envs` (values), `env_keys` (names whose values Goose keeps in the
  OS keyring, or `secrets.yaml` without one); `type: streamable_http`: `uri`, `headers` (Goose fills
  `${VAR}` in them), `envs`, `env_keys`. Both: `enabled` (Goose starts only extensions with
  `enabled: true`, and skips an entry without it), `name`, `description`, `timeout`, `bundled`,
  `available_tools`.
- `type: builtin` and `platform` are parts of Goose, not servers: not read. `frontend` and
  `inline_python` are not servers one can start elsewhere: a problem names them. `type: sse` is read
  as SSE, with a problem: Goose no longer starts SSE extensions.
- `env_keys` cannot be read here (the values are in Goose's keyring): a problem names them.

Install adds a `mcpmanager` stdio extension in the shape Goose writes (`enabled`, `type`, `name`,
`description`, `cmd`, `args`, `envs`, `env_keys`, `timeout`) after the last extension, with the
file's own indentation; `--disable-served` sets Goose's own `enabled: false` on each served
extension, with a comment saying mcpmanager put it there. Goose rewrites this file itself when its
settings change (comments dropped): undo then keeps Goose's version and takes out only mcpmanager's
part (see `yaml_dialects`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from mcpmanager.core.clients import yaml_text as yt
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig

SECTION = "extensions"
BRIDGE = "mcpmanager"
OFF = "# turned off by mcpmanager install (mcpmanager install --client goose --undo)"
DEFAULT_TIMEOUT = 300  # seconds, Goose's own default for an extension
_RENAMED = {"command": "cmd", "env": "envs", "url": "uri"}
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_NOT_SERVERS = {"builtin", "platform"}


class UnsupportedServer(ValueError):
    """A server Goose cannot run as an extension (SSE)."""


# A server as a Goose extension ---------------------------------------------------------------------


def extension_of(server: ServerConfig, description: str = "") -> dict[str, Any]:
    """`server` as the value of its key under `extensions`, in the shape Goose writes. Goose has no
    working folder for an extension (a stdio server's `cwd` is dropped) and starts no SSE server
    (UnsupportedServer)."""

    def head(kind: str) -> dict[str, Any]:  # in the order of Goose's documentation
        return {"type": kind, "name": server.name, "description": description, "enabled": not server.disabled}

    if isinstance(server, StdioServerConfig):
        body: dict[str, Any] = {"cmd": server.command, "args": list(server.args)}
        return {**head("stdio"), **body, "envs": dict(server.env), "env_keys": [], "timeout": DEFAULT_TIMEOUT}
    if server.transport == "sse":
        raise UnsupportedServer(f"{server.name}: Goose does not start SSE servers (only Streamable HTTP)")
    body = {"uri": server.url, "headers": dict(server.headers)}
    return {**head("streamable_http"), **body, "envs": {}, "env_keys": [], "timeout": DEFAULT_TIMEOUT}


def render(entries: Mapping[str, dict[str, Any]], newline: str = "\n", indent: int = 2) -> str:
    """Extensions as the lines under `extensions:` (each key at `indent`)."""
    lines: list[str] = []
    for key, entry in entries.items():
        lines += [f"{' ' * indent}{yt.key_text(key)}:", *yt.block_lines(entry, indent + 2)]
    return newline.join(lines) + newline


# Reading -----------------------------------------------------------------------------------------


def read_servers(text: str, path: Path) -> tuple[list[ServerConfig], list[str]]:
    """The servers of a Goose config file's text and the problems, one line each naming the file
    and the line of the extension."""
    section, nodes, problem = yt.section_to_read(text, path, SECTION, dict, "a mapping of extensions")
    if section is None:
        return [], problem
    keys = yt.pairs(nodes[1]) if nodes else {}
    problems: list[str] = []
    servers: dict[str, ServerConfig] = {}
    for name, entry in section.items():
        name = str(name)
        where = f"{path}:{yt.position(keys[name][0])}" if name in keys else str(path)
        server = _server(name, entry, where, problems)
        if server is not None:
            server = yt.usable(server, set(servers), where, f"{SECTION}.{yt.key_text(name)}", problems)
            servers[server.name] = server
    return list(servers.values()), problems


def entries(text: str, path: Path) -> dict[str, tuple[ServerConfig, bool]]:
    """The servers by their key (as read for import), each with whether Goose starts it (`enabled: true`)."""
    doc, _ = document(text, path)
    found = {}
    for name, entry in _section(doc).items():
        server = _server(str(name), entry, "", [])
        if server is not None:
            found[str(name)] = (server, isinstance(entry, dict) and entry.get("enabled") is True)
    return found


def _server(name: str, entry: Any, where: str, problems: list[str]) -> ServerConfig | None:
    key = f"{SECTION}.{yt.key_text(name)}"
    if not isinstance(entry, dict):
        problems.append(f"{where}: {key}: expected a mapping (server {name!r} not imported)")
        return None
    kind = entry.get("type")
    if kind in _NOT_SERVERS:
        return None
    if kind == "stdio":
        ours = {k: entry[g] for k, g in (("command", "cmd"), ("args", "args"), ("env", "envs"), ("cwd", "cwd"))
                if g in entry and entry[g] is not None}  # fmt: skip
    elif kind in ("streamable_http", "sse"):
        ours = {k: entry[g] for k, g in (("url", "uri"), ("headers", "headers")) if g in entry and entry[g] is not None}
        ours["type"] = "http" if kind == "streamable_http" else "sse"
    else:
        what = "an extension Goose runs itself" if kind in ("frontend", "inline_python") else "an unknown type"
        problems.append(f"{where}: {key}.type: {kind!r} is {what}, not a server (server {name!r} not imported)")
        return None
    if entry.get("enabled") is False:
        ours["disabled"] = True
    server = yt.server_from(name, ours, where, key, _RENAMED, problems)
    if server is None:
        return None
    if kind == "sse":
        problems.append(f"{where}: {key}.type: sse: Goose no longer starts SSE extensions; imported as SSE")
    if not isinstance(entry.get("enabled"), bool):
        problems.append(f"{where}: {key}: no enabled: true or false, so Goose skips it; imported")
    env_keys = entry.get("env_keys")
    if isinstance(env_keys, list) and env_keys:
        names = ", ".join(str(k) for k in env_keys)
        problems.append(
            f"{where}: {key}.env_keys: {names}: values Goose keeps in its keyring (or secrets.yaml); not read "
            "(add them to env in mcpmanager)"
        )
    texts = list(server.headers.values()) if isinstance(server, HttpServerConfig) else []
    variables = list(dict.fromkeys(m.group(0) for t in texts for m in _VARIABLE.finditer(t)))
    if variables:
        problems.append(
            f"{where}: {key}: uses {', '.join(variables)}: left as written (mcpmanager does not expand them)"
        )
    return server


def document(text: str | None, path: Path) -> tuple[Any, Node | None]:
    return yt.document(text, path, SECTION, dict, "a mapping of extensions")


def _section(doc: Any) -> dict[Any, Any]:
    section = doc.get(SECTION) if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else {}


def bridge_of(doc: Any) -> Any:
    """mcpmanager's extension in the document, or None."""
    return _section(doc).get(BRIDGE)


# Install's edits ---------------------------------------------------------------------------------


def installed(text: str | None, path: Path, entry: dict[str, Any], disable: Sequence[str]) -> str:
    """`text` with mcpmanager's extension and `enabled: false` in each of `disable`; deterministic
    (undo redoes it on the backup). InstallError when the result would differ anywhere else."""
    out = text or ""
    doc, _ = document(out, path)
    expected = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for name in disable:
        out = _turn_off(out, path, name)
        expected[SECTION][name]["enabled"] = False
    if bridge_of(expected) != entry:
        out = _put(out, path, entry)
    if not isinstance(expected.get(SECTION), dict):
        expected[SECTION] = {}
    expected[SECTION][BRIDGE] = entry
    return yt.reads_as(
        out, path, expected, "mcpmanager cannot add its extension to this file safely as text; not changed"
    )


def _extensions(out: str, path: Path) -> tuple[ScalarNode, Node] | None:
    _, root = document(out, path)
    return yt.pairs(root).get(SECTION)


def _turn_off(out: str, path: Path, name: str) -> str:
    found = _extensions(out, path)
    entry = yt.pairs(found[1]).get(name) if found else None
    enabled = yt.pairs(entry[1]).get("enabled") if entry else None
    if entry is None or enabled is None or not yt.is_block(entry[1]) or not isinstance(enabled[1], ScalarNode):
        raise InstallError(
            f"{path}: {SECTION}.{name}: not written as a block mapping with an enabled line: mcpmanager cannot turn "
            "it off there (no --disable-served, or write it in block style); not changed"
        )
    value = enabled[1]
    end = yt.next_line(out, value.end_mark.index)
    line_end = "\r\n" if out[:end].endswith("\r\n") else "\n" if out[:end].endswith("\n") else ""
    return out[: value.start_mark.index] + "false  " + OFF + line_end + out[end:]


def _put(out: str, path: Path, entry: dict[str, Any]) -> str:
    """mcpmanager's extension written in (or over an older one): whole lines, the file's indentation."""
    nl = yt.newline_of(out)
    found = _extensions(out, path)
    if found is None:  # no extensions yet: the section at the end of the file
        lines = f"{SECTION}:{nl}" + render({BRIDGE: entry}, nl)
        return _append(out, lines, nl)
    key, value = found
    if yt.is_null(value) or (isinstance(value, MappingNode) and value.flow_style and not value.value):
        # `extensions:`, `extensions: ~` or `extensions: {}` (as Goose writes none): the block under it
        out = yt.without_value(out, value)
        at = yt.next_line(out, key.end_mark.index)
        lines = render({BRIDGE: entry}, nl, key.start_mark.column + 2)
        return yt.insert_lines(out, at, lines, nl)
    if isinstance(value, MappingNode) and value.flow_style:
        mine = yt.pairs(value).get(BRIDGE)
        if mine is not None:
            return out[: mine[1].start_mark.index] + yt.flow(entry) + out[mine[1].end_mark.index :]
        close = value.end_mark.index - 1
        return out[:close].rstrip() + f", {yt.key_text(BRIDGE)}: {yt.flow(entry)}" + out[len(out[:close].rstrip()) :]
    if not isinstance(value, MappingNode):
        raise InstallError(f"{path}: {SECTION}: expected a mapping of extensions; not changed")
    first_key, first_value = value.value[0]
    indent = first_key.start_mark.column
    unit = 2
    if yt.is_block(first_value) and isinstance(first_value, MappingNode) and first_value.value:
        unit = max(first_value.value[0][0].start_mark.column - indent, 1)
    lines = "".join(f"{' ' * indent}{line}{nl}" for line in [f"{BRIDGE}:", *yt.block_lines(entry, unit, unit)])
    mine = yt.pairs(value).get(BRIDGE)
    if mine is not None:  # another mode: its lines replaced
        start = yt.line_start(out, mine[0].start_mark.index)
        end = yt.next_line(out, yt.content_end(out, mine[1], mine[0].end_mark.index))
        return out[:start] + lines + out[end:]
    return yt.insert_lines(out, yt.next_line(out, yt.content_end(out, value)), lines, nl)


def _append(out: str, lines: str, nl: str) -> str:
    if out and not out.endswith("\n"):
        out += nl
    return out + lines


# Undo's view -------------------------------------------------------------------------------------


def turned_off(text: str, path: Path) -> list[str]:
    """The extensions whose `enabled` line carries mcpmanager's comment."""
    found = _extensions(text, path)
    names = []
    for name, (_, entry) in yt.pairs(found[1] if found else None).items():
        enabled = yt.pairs(entry).get("enabled")
        if enabled is not None:
            line = text[enabled[1].start_mark.index : yt.next_line(text, enabled[1].start_mark.index)]
            if OFF in line:
                names.append(name)
    return names


def off_since(text: str, path: Path, backup: str | None) -> list[str]:
    """When Goose rewrote the file (mcpmanager's comments go with every comment): the extensions on
    in the backup taken before the install and off now, which is what install turned off."""
    try:
        before = _section(yt.load(backup, path)[0]) if backup is not None else {}
    except yt.YamlError:
        return []
    now = _section(document(text, path)[0])
    return [
        str(name)
        for name, entry in before.items()
        if isinstance(entry, dict) and entry.get("enabled") is True
        and isinstance(now.get(name), dict) and now[name].get("enabled") is False
    ]  # fmt: skip


def take_out(text: str, path: Path, off: Sequence[str]) -> str:
    """The file without mcpmanager's extension and with the `off` extensions enabled again (the
    user's edits since install kept): a line install marked becomes `enabled: true` again whole,
    another `enabled: false` gets its value changed."""
    for name in off:
        found = _extensions(text, path)
        enabled = yt.pairs(yt.pairs(found[1] if found else None)[name][1])["enabled"][1]
        start, end = enabled.start_mark.index, yt.next_line(text, enabled.start_mark.index)
        if OFF in text[start:end]:
            end -= len(text[start:end]) - len(text[start:end].rstrip("\r\n"))
        else:
            end = enabled.end_mark.index
        text = text[:start] + "true" + text[end:]
    found = _extensions(text, path)
    mine = yt.pairs(found[1] if found else None).get(BRIDGE)
    if mine is not None and found is not None and yt.is_block(found[1]):
        start = yt.line_start(text, mine[0].start_mark.index)
        text = text[:start] + text[yt.next_line(text, yt.content_end(text, mine[1], mine[0].end_mark.index)) :]
    elif mine is not None:
        raise InstallError(f"{path}: {SECTION}.{BRIDGE} is not written in block style: remove it by hand")
    return text
