"""YAML client files (Goose, Continue) read with positions and edited as text, never re-serialised.

Reading: PyYAML's safe loader, with the YAML 1.2 core schema the clients use (Goose reads with
serde_yaml, Continue with the `yaml` package): only `true`/`false` are booleans and `0755` stays a
string, where PyYAML's YAML 1.1 default would turn `yes`, `on` and `0755` into other values. The
file is composed twice: once for the values (merge keys `<<` applied) and once for the nodes, whose
marks give each key's and value's place in the text, so an edit touches only the lines it means to.

Editing: whole lines are inserted, replaced or commented out at places found from the nodes, in the
file's own line ends; the caller parses the result again and compares it with what it expects, so
an edit that would change anything else is refused (`InstallError`) and nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.names import SERVER_NAME, usable_name
from mcpmanager.core.config.servers import ServerConfig


class YamlError(Exception):
    """The file does not read as YAML; str() is `<file>:<line>:<column>: invalid YAML: reason`."""


class _Loader(yaml.SafeLoader):
    """The safe loader with YAML 1.2's core schema instead of YAML 1.1's implicit types."""

    yaml_implicit_resolvers = {}  # noqa: RUF012 - its own, not SafeLoader's


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("merge", r"^(?:<<)$", ["<"]),
):
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), _first)


def _int(loader: yaml.SafeLoader, node: Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    return int(text[2:], 16) if text.startswith("0x") else int(text[2:], 8) if text.startswith("0o") else int(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _int)  # YAML 1.2: `0755` is 755, not octal


def load(text: str, path: Path) -> tuple[Any, Node | None]:
    """The document's value and its root node (None for an empty file); YamlError naming the place."""
    try:
        value = yaml.load(text, Loader=_Loader)  # a safe loader: SafeLoader's subclass
        return value, yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        raise YamlError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise YamlError(f"{path}: invalid YAML: {exc}") from None
    except RecursionError:
        raise YamlError(f"{path}: invalid YAML: nested too deeply") from None


def document(text: str | None, path: Path, section: str, kind: type, what: str) -> tuple[Any, Node | None]:
    """A client file's value and root node, for install and export; InstallError naming the place
    when it does not read, is not a mapping, or its `section` is not of `kind` (`what` says which)."""
    try:
        doc, root = load(text or "", path)
    except YamlError as exc:
        raise InstallError(f"{exc}; not changed") from None
    if doc is not None and not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a mapping at the top level; not changed")
    value = doc.get(section) if isinstance(doc, dict) else None
    if value is not None and not isinstance(value, kind):
        raise InstallError(f"{path}: {section}: expected {what}; not changed")
    return doc, root


def section_to_read(
    text: str, path: Path, section: str, kind: type, what: str
) -> tuple[Any, tuple[ScalarNode, Node] | None, list[str]]:
    """For import: a client file's `section` (None when it has none), its key's and value's nodes,
    and the problem when the file does not read or the section is not of `kind` (`what` says which)."""
    try:
        doc, root = load(text, path)
    except YamlError as exc:
        return None, None, [str(exc)]
    if doc is not None and not isinstance(doc, dict):
        return None, None, [f"{path}: expected a mapping at the top level, got {type(doc).__name__}"]
    value = doc.get(section) if isinstance(doc, dict) else None
    nodes = pairs(root).get(section)
    if value is not None and not isinstance(value, kind):
        where = f"{path}:{position(nodes[0])}" if nodes else str(path)
        return None, None, [f"{where}: {section}: expected {what}, got {type(value).__name__}"]
    return value, nodes, []


def reads_as(out: str, path: Path, expected: Any, refusal: str) -> str:
    """`out` when it reads as `expected` (a text edit changed only what it meant to), else
    InstallError(`refusal`): every YAML edit is parsed again before anything is written."""
    try:
        got, _ = load(out, path)
    except YamlError:
        got = None
    if got != expected:
        raise InstallError(f"{path}: {refusal}")
    return out


def position(node: Node) -> str:
    """`line:column` (1-based) where a node starts."""
    return f"{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def pairs(node: Node | None) -> dict[str, tuple[ScalarNode, Node]]:
    """A mapping node's keys (scalars; the last one written counts, as when loading) with their nodes."""
    found: dict[str, tuple[ScalarNode, Node]] = {}
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                found[key.value] = (key, value)
    return found


def items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def is_block(node: Node) -> bool:
    return isinstance(node, MappingNode | SequenceNode) and not node.flow_style


def content_end(text: str, node: Node, after: int = 0) -> int:
    """Where a node's own text ends: a block collection's end mark lies past the comments and blank
    lines after it, so it ends where its last child does. An alias (its node is the anchored one,
    written elsewhere) ends with the line it is on."""
    if node.start_mark.index < after:
        return next_line(text, after) - len(_line_end(text, after))
    if isinstance(node, MappingNode) and not node.flow_style and node.value:
        key, value = node.value[-1]
        return max(content_end(text, key), content_end(text, value, key.end_mark.index))
    if isinstance(node, SequenceNode) and not node.flow_style and node.value:
        return content_end(text, node.value[-1], node.start_mark.index)
    end = max(node.end_mark.index, node.start_mark.index)
    while end > node.start_mark.index and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def next_line(text: str, index: int) -> int:
    """The index just after the line end of the line `index` is on (the end of the text on the last line)."""
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1


def _line_end(text: str, index: int) -> str:
    end = next_line(text, index)
    return "\r\n" if text[:end].endswith("\r\n") else "\n" if text[:end].endswith("\n") else ""


def dash_column(text: str, item: Node) -> int:
    """The column of the `-` that starts a block sequence's item."""
    at = item.start_mark.index - 1
    while at >= 0 and text[at] in " \t\r\n":
        at -= 1
    if at < 0 or text[at] != "-":
        return max(item.start_mark.column - 2, 0)
    return at - line_start(text, at)


def without_value(text: str, node: Node) -> str:
    """`text` without a value's span (`~`, `{}`, `[]`), and the blanks before it when it ends its line."""
    start, end = node.start_mark.index, node.end_mark.index
    if end == len(text) or text[end] in "\r\n":
        while start > 0 and text[start - 1] in " \t":
            start -= 1
    return text[:start] + text[end:]


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def insert_lines(text: str, at: int, lines: str, newline: str) -> str:
    """`lines` (each ending in `newline`) inserted at `at`, a line start (or the end of the text,
    which gets a line end first when it has none)."""
    if at == len(text) and text and not text.endswith("\n"):
        return text + newline + lines
    return text[:at] + lines + text[at:]


# Writing YAML ------------------------------------------------------------------------------------

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+-]*")
_NOT_PLAIN = {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}  # what YAML 1.1 readers also take


def scalar(value: Any) -> str:
    """A scalar as any YAML reader reads it back: a string plain when nothing can mistake it, else
    double-quoted (JSON's escapes are YAML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if value is None:
        return "null"
    text = str(value)
    return text if _plain(text, _PLAIN) else json.dumps(text, ensure_ascii=False)


def key_text(key: str) -> str:
    """A key as a string to every reader: `true`, `null`, `yes` as keys would be a boolean or null."""
    return key if _plain(key, _PLAIN_KEY) else json.dumps(key, ensure_ascii=False)


def _plain(text: str, pattern: re.Pattern[str]) -> bool:
    return bool(pattern.fullmatch(text)) and text.lower() not in _NOT_PLAIN


def flow(value: Any) -> str:
    """A value in flow style (JSON is YAML)."""
    return json.dumps(value, ensure_ascii=False)


def block_lines(mapping: dict[str, Any], indent: int, unit: int = 2) -> list[str]:
    """A mapping's `key: value` lines at `indent` (no line ends): nested mappings and lists one
    `unit` deeper, empty ones as `{}` and `[]`."""
    pad = " " * indent
    lines = []
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            lines += [f"{pad}{key_text(key)}:", *block_lines(value, indent + unit, unit)]
        elif isinstance(value, list) and value:
            lines.append(f"{pad}{key_text(key)}:")
            for item in value:
                lines.append(f"{pad}{' ' * unit}- {flow(item) if isinstance(item, dict | list) else scalar(item)}")
        elif isinstance(value, dict | list):
            lines.append(f"{pad}{key_text(key)}: {flow(value)}")
        else:
            lines.append(f"{pad}{key_text(key)}: {scalar(value)}")
    return lines


def item_lines(mapping: dict[str, Any], dash: int, unit: int = 2) -> list[str]:
    """A block sequence item holding `mapping`: `- key: value` at column `dash`, the rest under it."""
    lines = block_lines(mapping, dash + unit, unit)
    if lines:
        lines[0] = " " * dash + "-" + " " * (unit - 1) + lines[0][dash + unit :]
    return lines


# Reading servers ---------------------------------------------------------------------------------


def server_from(
    name: str, ours: dict[str, Any], where: str, key: str, renamed: dict[str, str], problems: list[str]
) -> ServerConfig | None:
    """A server from mcpmanager's own keys, validated as mcpmanager's config file is; a problem naming
    `key` (the client's key path, its own names for mcpmanager's keys in `renamed`) when it does not read."""
    env = ours.get("env")
    if isinstance(env, dict):  # numbers and booleans as the process gets them
        ours["env"] = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in env.items()}
    try:
        config = parse_config(json.dumps({"mcpServers": {"x": ours}}), where)
    except ConfigError as exc:
        rest = exc.key[len("mcpServers.x") :]
        first, dot, tail = rest.lstrip(".").partition(".")
        rest = f".{renamed.get(first, first)}{dot}{tail}" if rest else ""
        problems.append(f"{where}: {key}{rest}: {exc.reason} (server {name!r} not imported)")
        return None
    except (TypeError, ValueError):
        problems.append(f"{where}: {key}: holds values mcpmanager cannot read (server {name!r} not imported)")
        return None
    return replace(next(iter(config.servers.values())), name=name)


def usable(server: ServerConfig, taken: set[str], where: str, key: str, problems: list[str]) -> ServerConfig:
    """The server under a name mcpmanager accepts (a problem says so when it had to change it)."""
    if SERVER_NAME.match(server.name) and server.name not in taken:
        return server
    name = usable_name(server.name, taken)
    reason = "not a name mcpmanager accepts (letters, digits, '-', '_', '.')"
    if SERVER_NAME.match(server.name):
        reason = "a name used twice in this file"
    problems.append(f"{where}: {key}: {reason}; imported as {name!r}")
    return replace(server, name=name)
