"""Continue's YAML config: its `mcpServers` list read into mcpmanager's servers, a server written as a
Continue list item (`item_of`, for install and export), and the text edits install makes.

Continue (the VS Code and JetBrains extension, and its `cn` CLI) reads `~/.continue/config.yaml`
and every YAML block file in `~/.continue/mcpServers/` (https://docs.continue.dev/customize/deep-dives/mcp,
https://docs.continue.dev/reference; continuedev/continue `docs/customize/deep-dives/mcp.mdx`,
`packages/config-yaml/src/schemas/mcp/index.ts`, `core/config/yaml/loadYaml.ts`). Both hold an
`mcpServers` LIST; a block file also has `name`, `version` and `schema` at its top. Each item:

- `name` (a display name, spaces allowed: imported under a usable name, with a problem);
- `command`, `args`, `env`, `cwd` (stdio; `type: stdio` optional), or `url` with `type: sse` or
  `streamable-http` (no type: read as Streamable HTTP) and `requestOptions.headers`;
- `apiKey` (remote): not read, a problem says so (add an Authorization header in mcpmanager);
  `connectionTimeout`, `faviconUrl` and the like are Continue's own: ignored;
- `uses: owner/block` (a Continue Hub block): only Continue resolves it, a problem names it;
- `${{ secrets.X }}` and `${{ inputs.X }}` are filled in by Continue (its secrets, the Hub):
  imported as written with a problem, never read.

The old `config.json` (`experimental.modelContextProtocolServers`) is deprecated in Continue's
documentation and ignored by Continue when `config.yaml` exists: not read. JSON files in
`~/.continue/mcpServers/` (Continue reads Claude-style files there too) are not read either.

Install appends a `mcpmanager` item to config.yaml's `mcpServers` (the file Continue's documentation
has users edit: one file, one backup, one exact undo; a block file of its own would leave
`--disable-served` nothing to edit in the same change). Continue has no switch to turn a server off
in its files, so `--disable-served` comments the item's lines out, each prefixed with `OFF`; undo
takes the prefix away again, so the lines come back byte for byte. Servers in block files are only
named (those files are not edited).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mcpmanager.core.clients import yaml_text as yt
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig

SECTION = "mcpServers"
BRIDGE = "mcpmanager"
OFF = "# off by mcpmanager: "  # the prefix of each line of an item install turned off
NEW_FILE = "name: Local Config\nversion: 1.0.0\nschema: v1\n"  # what Continue writes in a new config.yaml
_TEMPLATE = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


# A server as a Continue item ---------------------------------------------------------------------


def item_of(server: ServerConfig) -> dict[str, Any]:
    """`server` as an item of a `mcpServers` list, as Continue's documentation writes one. (Continue
    has no way to keep a server but off: `disabled` is not written.)"""
    item: dict[str, Any] = {"name": server.name}
    if isinstance(server, StdioServerConfig):
        item |= {"type": "stdio", "command": server.command, "args": list(server.args)}
        if server.env:
            item["env"] = dict(server.env)
        if server.cwd:
            item["cwd"] = server.cwd
        return item
    item |= {"type": "sse" if server.transport == "sse" else "streamable-http", "url": server.url}
    if server.headers:
        item["requestOptions"] = {"headers": dict(server.headers)}
    return item


def render(servers: Sequence[dict[str, Any]], newline: str = "\n", dash: int = 2) -> str:
    """Items as the lines under `mcpServers:`."""
    return "".join(line + newline for item in servers for line in yt.item_lines(item, dash))


# Reading -----------------------------------------------------------------------------------------


def read_servers(text: str, path: Path) -> tuple[list[ServerConfig], list[str]]:
    """The servers of a Continue config.yaml or block file's text and the problems, one line each
    naming the file and the line of the item."""
    section, nodes, problem = yt.section_to_read(text, path, SECTION, list, "a list of servers")
    if section is None:
        return [], problem
    places = yt.items(nodes[1]) if nodes else []
    problems: list[str] = []
    servers: dict[str, ServerConfig] = {}
    for number, entry in enumerate(section):
        where = f"{path}:{yt.position(places[number])}" if number < len(places) else str(path)
        server = _server(number, entry, where, problems)
        if server is not None:
            key = f"{SECTION}[{number}] ({server.name!r})"
            server = yt.usable(server, set(servers), where, key, problems)
            servers[server.name] = server
    return list(servers.values()), problems


def entries(text: str, path: Path) -> list[tuple[str, ServerConfig]]:
    """The servers in file order, each with its `name` as written (as read for import)."""
    doc, _ = document(text, path)
    servers = (_server(number, entry, "", []) for number, entry in enumerate(_section(doc)))
    return [(server.name, server) for server in servers if server is not None]


def _server(number: int, entry: Any, where: str, problems: list[str]) -> ServerConfig | None:
    key = f"{SECTION}[{number}]"
    if not isinstance(entry, dict):
        problems.append(f"{where}: {key}: expected a mapping (not imported)")
        return None
    if "uses" in entry:
        problems.append(
            f"{where}: {key}: uses {entry['uses']}: a Continue Hub block only Continue resolves; not imported"
        )
        return None
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}: {key}.name: expected the server's name (not imported)")
        return None
    key = f"{key} ({name!r})"
    fields = ("command", "args", "env", "cwd") if "command" in entry else ("url",)
    ours = {k: entry[k] for k in fields if entry.get(k) is not None}
    if "command" not in entry and "url" in entry:
        ours["type"] = "sse" if entry.get("type") == "sse" else "http"
        options = entry.get("requestOptions")
        if isinstance(options, dict) and options.get("headers") is not None:
            ours["headers"] = options["headers"]
    server = yt.server_from(name, ours, where, key, {"headers": "requestOptions.headers"}, problems)
    if server is None:
        return None
    if "apiKey" in entry and isinstance(server, HttpServerConfig):
        problems.append(
            f"{where}: {key}.apiKey: a key Continue sends for this server; not read (add an Authorization header "
            "in mcpmanager)"
        )
    if isinstance(server, StdioServerConfig):
        texts = [server.command, *server.args, *server.env.values(), server.cwd or ""]
    else:
        texts = [server.url, *server.headers.values()]
    templates = list(dict.fromkeys(f"${{{{ {m.group(1)} }}}}" for t in texts for m in _TEMPLATE.finditer(t)))
    if templates:
        problems.append(
            f"{where}: {key}: uses {', '.join(templates)}, which Continue fills in (its secrets, the Hub); imported "
            "as written: enter the values in mcpmanager"
        )
    return server


def refuse_hiding_config_json(path: Path, exists: bool) -> None:
    """Continue reads config.json only while there is no config.yaml beside it: creating one (install,
    export) would silently drop the user's models and settings. InstallError then."""
    if not exists and path.with_name("config.json").is_file():
        raise InstallError(
            f"{path}: Continue reads config.json in this folder, and a new config.yaml would take its place: "
            "move your settings to config.yaml first (Continue's 'Migrating Config to YAML'); not changed"
        )


def document(text: str | None, path: Path) -> tuple[Any, Node | None]:
    return yt.document(text, path, SECTION, list, "a list of servers")


def _section(doc: Any) -> list[Any]:
    section = doc.get(SECTION) if isinstance(doc, dict) else None
    return section if isinstance(section, list) else []


def _named(values: list[Any], name: str) -> int | None:
    return next((i for i, v in enumerate(values) if isinstance(v, dict) and v.get("name") == name), None)


def bridge_of(doc: Any) -> Any:
    """mcpmanager's item in the document, or None."""
    section = _section(doc)
    at = _named(section, BRIDGE)
    return None if at is None else section[at]


# Install's edits ---------------------------------------------------------------------------------


def installed(text: str | None, path: Path, entry: dict[str, Any], disable: Sequence[str]) -> str:
    """`text` with mcpmanager's item and each of `disable` commented out; deterministic (undo redoes
    it on the backup). InstallError when the result would differ anywhere else."""
    out = text if text and text.strip() else (text or "") + NEW_FILE
    doc, _ = document(out, path)
    expected = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for name in disable:
        out = _turn_off(out, path, name)
        at = _named(expected[SECTION], name)
        if at is None:
            raise InstallError(f"{path}: {SECTION}: no server named {name!r}; not changed")
        del expected[SECTION][at]
    if bridge_of(expected) != entry:
        out = _put(out, path, entry)
    section = expected.get(SECTION)
    if not isinstance(section, list):
        section = expected[SECTION] = []
    at = _named(section, BRIDGE)
    if at is None:
        section.append(entry)
    else:
        section[at] = entry
    return yt.reads_as(out, path, expected, "mcpmanager cannot add its server to this file safely as text; not changed")


def _list(out: str, path: Path) -> tuple[ScalarNode, Node] | None:
    _, root = document(out, path)
    return yt.pairs(root).get(SECTION)


def _item(out: str, path: Path, name: str) -> tuple[Node, Node] | None:
    """The list's node and the first item named `name`."""
    found = _list(out, path)
    for item in yt.items(found[1] if found else None):
        named = yt.pairs(item).get("name")
        if named is not None and isinstance(named[1], ScalarNode) and named[1].value == name:
            return found[1], item  # type: ignore[index]
    return None


def _lines_of(out: str, item: Node) -> tuple[int, int]:
    """Where an item's lines start (its `-`) and end."""
    at = item.start_mark.index - 1
    while at > 0 and out[at] in " \t\r\n":
        at -= 1
    return yt.line_start(out, at), yt.next_line(out, yt.content_end(out, item))


def _turn_off(out: str, path: Path, name: str) -> str:
    found = _item(out, path, name)
    if found is None or not yt.is_block(found[0]):
        raise InstallError(
            f"{path}: {SECTION}: {name!r} is not an item of a block list (- name: …): mcpmanager cannot comment it "
            "out (no --disable-served, or write the list in block style); not changed"
        )
    start, end = _lines_of(out, found[1])
    lines = out[start:end].splitlines(keepends=True)
    return out[:start] + "".join(OFF + line for line in lines) + out[end:]


def _put(out: str, path: Path, entry: dict[str, Any]) -> str:
    nl = yt.newline_of(out)
    found = _list(out, path)
    if found is None:
        if out and not out.endswith("\n"):
            out += nl
        return out + f"{SECTION}:{nl}" + render([entry], nl)
    key, value = found
    if yt.is_null(value) or (isinstance(value, SequenceNode) and value.flow_style and not value.value):
        out = yt.without_value(out, value)
        return yt.insert_lines(
            out, yt.next_line(out, key.end_mark.index), render([entry], nl, key.start_mark.column + 2), nl
        )
    if not isinstance(value, SequenceNode):
        raise InstallError(f"{path}: {SECTION}: expected a list of servers; not changed")
    if value.flow_style:
        mine = _item(out, path, BRIDGE)
        if mine is not None:
            return out[: mine[1].start_mark.index] + yt.flow(entry) + out[mine[1].end_mark.index :]
        head = out[: value.end_mark.index - 1].rstrip()
        return head + f", {yt.flow(entry)}" + out[len(head) :]
    first = value.value[0]
    dash = yt.dash_column(out, first)
    unit = max(first.start_mark.column - dash, 1) if isinstance(first, MappingNode) else 2
    lines = "".join(line + nl for line in yt.item_lines(entry, dash, unit))
    mine = _item(out, path, BRIDGE)
    if mine is not None:  # another mode: its lines replaced
        start, end = _lines_of(out, mine[1])
        return out[:start] + lines + out[end:]
    return yt.insert_lines(out, yt.next_line(out, yt.content_end(out, value)), lines, nl)


# Undo's view -------------------------------------------------------------------------------------


def _uncommented(text: str) -> str:
    return "".join(line.removeprefix(OFF) for line in text.splitlines(keepends=True))


def turned_off(text: str, path: Path) -> list[str]:
    """The names of the yt.items install commented out, in file order."""
    if OFF not in text:
        return []
    now = [v.get("name") for v in _section(document(text, path)[0]) if isinstance(v, dict)]
    off = []
    for value in _section(document(_uncommented(text), path)[0]):
        name = value.get("name") if isinstance(value, dict) else None
        if name in now:
            now.remove(name)
        elif isinstance(name, str):
            off.append(name)
    return off


def take_out(text: str, path: Path) -> str:
    """The file with the commented-out yt.items back and without mcpmanager's item (edits since kept)."""
    text = _uncommented(text)
    mine = _item(text, path, BRIDGE)
    if mine is not None and yt.is_block(mine[0]):
        start, end = _lines_of(text, mine[1])
        text = text[:start] + text[end:]
    elif mine is not None:
        raise InstallError(f"{path}: {SECTION}: mcpmanager's item is in a yt.flow list: remove it by hand")
    return text


def block_files(folder: Path) -> list[Path]:
    """Continue's YAML block files of MCP servers in `folder` (`~/.continue/mcpServers`), by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
