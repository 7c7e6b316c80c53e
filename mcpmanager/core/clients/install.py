"""`mcpmanager install --client CLIENT`: mcpmanager's bridge entry written into a client's config,
with a preview, a timestamped backup and an exact undo.

Where the entry goes (named `mcpmanager`; it runs `mcpmanager connect`, with `--mode discovery|direct`
when a mode is chosen, none to follow the engine's `proxy.mode`; the command is
`own_command.mcpmanager_command()`, absolute, since GUI apps lack the shell's PATH):

- Claude Desktop, Cursor: `mcpServers.mcpmanager = {"command", "args"}` in their file (every Claude
  Desktop file there is: Windows' Store build reads its own copy).
- VS Code (and Insiders): `servers.mcpmanager = {"type": "stdio", "command", "args"}` in the user
  `mcp.json`. Never `settings.json`: it is JSONC with the user's comments and every other setting.
- Claude Code: user scope, `mcpServers.mcpmanager = {"type": "stdio", "command", "args", "env": {}}`
  in `~/.claude.json` (as `claude mcp add --scope user` writes it).
- Windsurf, Gemini CLI: `mcpServers.mcpmanager = {"command", "args"}`, as for Claude Desktop, in
  `~/.codeium/windsurf/mcp_config.json` and in the user settings `~/.gemini/settings.json` (every
  other setting there, and its comments, stay as they are).
- Codex: a `[mcp_servers.mcpmanager]` table (`command`, `args`) appended to `~/.codex/config.toml`;
  `--disable-served` writes Codex's own `enabled = false` into each served server's table
  (`codex_install`).
- Zed: `context_servers.mcpmanager = {"command", "args", "env": {}}` (its documented form) in its
  `settings.json`; Cline: `mcpServers.mcpmanager = {"command", "args"}` in each of its files there
  is; `--disable-served` writes their own switch (Zed `"enabled": false`, Cline `"disabled": true`;
  `switch_install`). LM Studio: `mcpServers.mcpmanager = {"command", "args"}` in `mcp.json`, as
  Cursor's.
- Goose: a `mcpmanager` stdio extension (`enabled`, `type`, `name`, `description`, `cmd`, `args`,
  `envs`, `env_keys`, `timeout`) under `extensions` in its `config.yaml`; `--disable-served` writes
  Goose's own `enabled: false`. Continue: a `- name: mcpmanager` item (`type: stdio`, `command`,
  `args`) appended to `mcpServers` in `~/.continue/config.yaml` (its block files are only read);
  Continue has no off switch, so `--disable-served` comments the served items out (`yaml_install`).

A client counts as present when its file exists, or its folder does (`~/.cursor`, `Code/User`,
`Claude/`, `~/.claude`, `~/.codeium/windsurf`, `~/.gemini`, `~/.codex`, `~/.config/zed`,
`~/.cline/data/settings`, `~/.lmstudio`): the file is then created.

How the file is written: the text is edited in place, never re-serialized. Only the spans that
change are touched (a member inserted after the last one, on its own line, with the file's own
indentation and line ends; a comma added where JSON needs one), so every other key, value, comment,
byte-order mark and blank line stays byte for byte. The write is atomic (temporary file, fsync,
rename) and keeps the file's mode; through a symlink, the target is written.

Turning off what mcpmanager serves (`disable_served`): apart from Codex, Zed and Cline (their own
switches, above), none of these clients reliably honours a per-server `disabled` flag in these files
(VS Code's schema has none, Claude Code ignores it, Cursor keeps its toggles elsewhere, and LM
Studio, which follows Cursor's notation, documents none), so the entries of servers mcpmanager
already serves (see `importing.served_by`) are moved, as their exact text, from the servers object
into a sibling object the client does not read, `disabledByMcpmanager` (for Claude Code, per scope: top level and
each project). Nothing is lost: undo moves them back. Servers in VS Code's `settings.json` are only
named (that file is not edited).

Backups and undo: before a file is changed, its bytes are copied next to it as
`<name>.mcpmanager-<YYYYMMDD-HHMMSS>.bak` (`-2`… when two fall in one second). A file that did not
exist gets no backup. Installing what is already there changes nothing and makes no backup. Undo
takes the newest backup: when the file is still exactly what installing onto that backup produces
(checked by redoing the install, so nothing else needs storing), the backup's bytes come back byte
for byte (or the file goes, if install created it) and that backup is removed (the stack of
installs unwinds one at a time). When the file was edited since (Claude Code rewrites its file
itself), the edits are kept: only mcpmanager's entry is removed and the servers it turned off go
back; the backup stays for the user.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from mcpmanager.core.clients import codex_install, gemini_allowed, switch_install, yaml_install, zed
from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.change import Change, InstalledMode, Layout, Target, TargetState
from mcpmanager.core.clients.client_file import decode, label, object_at, parse, read_file
from mcpmanager.core.clients.errors import ClientNotFound, InstallError
from mcpmanager.core.clients.importing import BRIDGE_NAME, check_client, read_entries, served_by
from mcpmanager.core.clients.json_edit import JsonText, Raw
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.json_text import KeyPath, render
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import Mode

STASH_KEY = "disabledByMcpmanager"
_READ_ONLY = ("vscode-settings", "continue-block")  # files install never writes


# Where -------------------------------------------------------------------------------------------


def install_targets(
    client: str, home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ
) -> list[Target]:
    """The files of `client` install writes: each that exists or whose folder does; ClientNotFound
    (naming the places looked at) when the client is not on this machine."""
    check_client(client)
    places = [w for w in client_locations(home, platform, env) if w.client == client and w.layout not in _READ_ONLY]
    found = []
    for where in places:
        folder = where.path.parent
        if where.layout == "claude-code" and folder == home:
            folder = home / ".claude"  # the home folder exists anyway: Claude Code's own folder says it ran
        if where.path.is_file() or folder.is_dir():
            found.append(Target(where.client, where.label, where.path, cast(Layout, where.layout)))
    if not found:
        looked = ", ".join(str(w.path) for w in places)
        raise ClientNotFound(f"{places[0].label if places else client} not found (looked at {looked})")
    return found


def bridge_entry(layout: Layout, command: Sequence[str], mode: Mode | None = None) -> dict[str, Any]:
    """The entry that runs the bridge, in the client's own format. No mode: no `--mode`, so the
    client gets the engine's mode (the config's `proxy.mode`); a mode chosen is written, whatever
    the engine's default."""
    args = [*command[1:], "connect", *(["--mode", mode] if mode is not None else [])]
    entry: dict[str, Any] = {"command": command[0], "args": args}
    if layout == "vscode":
        return {"type": "stdio", **entry}
    if layout == "claude-code":
        return {"type": "stdio", **entry, "env": {}}
    if layout == "zed":
        return zed.bridge_entry(entry)
    return entry


def installed_mode(entry: Any) -> InstalledMode | None:
    """The mode an entry in a client runs mcpmanager in: `default` (no `--mode`: the engine's), or
    None when there is no entry."""
    if not isinstance(entry, dict):
        return None
    args = entry.get("args")
    args = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
    if "--mode" in args[:-1]:
        chosen = args[args.index("--mode") + 1]
        return "direct" if chosen == "direct" else "discovery"
    return "default"


# Install -----------------------------------------------------------------------------------------


def plan_install(
    target: Target,
    command: Sequence[str],
    mode: Mode | None = None,
    *,
    config: Config | None = None,
    disable_served: bool = False,
    home: Path | None = None,
) -> Change:
    """What installing would write (the preview); reads only. `config` is mcpmanager's, to find the
    servers it already serves (needed for `disable_served`)."""
    if target.layout == "codex":  # TOML, edited as text by its own module
        entry = bridge_entry(target.layout, command, mode)
        return codex_install.plan_install(target, entry, mode, config=config, disable_served=disable_served, home=home)
    if target.layout in ("goose", "continue"):  # YAML, edited as text by its own modules
        return yaml_install.plan_install(target, command, mode, config=config, disable_served=disable_served, home=home)
    if target.layout in switch_install.SWITCHES:  # Zed, Cline: their own per-server off switch
        entry = bridge_entry(target.layout, command, mode)
        return switch_install.plan_install(target, entry, mode, config=config, disable_served=disable_served, home=home)
    before = read_file(target.path)
    text = decode(before, target.path) if before is not None else None
    doc = parse(text, target.path)
    served = _served(doc, target, config, home) if config is not None else {}
    labels = tuple(label(section, name) for section, names in served.items() for name in names)
    notes = _settings_notes(target, config, home) if config is not None else []
    entry = bridge_entry(target.layout, command, mode)
    after = _installed(text, target, entry, served if disable_served else {})
    return Change.install(target, before, after, mode, labels, disable_served, notes)


def _served(doc: dict[str, Any], target: Target, config: Config, home: Path | None) -> dict[KeyPath, list[str]]:
    """The servers of the file, by section, that mcpmanager already serves (read as import reads
    them, so an imported server is recognised; mcpmanager's own entry aside)."""
    served: dict[KeyPath, list[str]] = {}
    for section in _sections(doc, target.layout):
        entries = {k: v for k, v in object_at(doc, section).items() if k != BRIDGE_NAME}
        for key, server in read_entries(entries, home or Path.home(), target.layout).items():
            if served_by(server, config) is not None:
                served.setdefault(section, []).append(key)
    return served


def _installed(
    text: str | None, target: Target, entry: dict[str, Any], disable: Mapping[KeyPath, Sequence[str]]
) -> str:
    """`text` with the entry written and the `disable` servers moved to their stash. Deterministic:
    undo redoes it on the backup to tell whether the file was edited since."""
    blank = text is None or not text.strip()
    unit = "\t" if target.layout == "vscode" else "  "  # as VS Code and the others write new files
    doc = JsonText("{}\n" if blank else str(text), unit, str(target.path))
    for section, names in disable.items():
        stash = (*section[:-1], STASH_KEY)
        for name in names:
            value = doc.remove(section, name)
            if value is not None:
                doc.ensure_object(stash)
                doc.set(stash, name, Raw(value))
    section = _sections({}, target.layout)[0]
    doc.ensure_object(section)
    doc.set(section, BRIDGE_NAME, entry)
    if target.layout == "gemini":
        gemini_allowed.allow(doc, [BRIDGE_NAME])
    return doc.text


def _settings_notes(target: Target, config: Config, home: Path | None) -> list[str]:
    """VS Code: servers mcpmanager serves that are in settings.json, which is never edited."""
    if target.layout != "vscode":
        return []
    settings = target.path.with_name("settings.json")
    if not settings.is_file():
        return []
    read = read_client_config(target.client, settings, "vscode-settings", home=home)
    names = [s.name for s in read.servers if served_by(s, config) is not None]
    if not names:
        return []
    return [
        f"{settings} also has {', '.join(names)}, served by mcpmanager: mcpmanager does not edit settings.json "
        '(comments, every other setting); remove them from its "mcp" section to not load their tools twice'
    ]


# Undo --------------------------------------------------------------------------------------------


def plan_undo(target: Target) -> Change:
    """What undoing the last install would write (see the module docstring); reads only."""
    if target.layout == "codex":
        return codex_install.plan_undo(target)
    if target.layout in ("goose", "continue"):
        return yaml_install.plan_undo(target)
    if target.layout in switch_install.SWITCHES:
        return switch_install.plan_undo(target)
    before = read_file(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = decode(before, target.path)
    doc = parse(text, target.path)
    sections = _sections(doc, target.layout)
    entry = object_at(doc, sections[0]).get(BRIDGE_NAME)
    stashed = {s: list(object_at(doc, (*s[:-1], STASH_KEY))) for s in sections}
    stashed = {s: names for s, names in stashed.items() if names}
    if entry is None and not stashed:
        note = f"mcpmanager is not installed in {target.path}: nothing to undo"
        return Change(target, "undo", before, before, notes=(note,))
    moved = tuple(label(s, name) for s, names in stashed.items() for name in names)
    if isinstance(entry, dict):
        backups = list_backups(target.path)
        for backup, original in ((b, read_file(b)) for b in backups[:1]):
            if original is not None and _redo(original, target, entry, stashed) == before:
                return Change(target, "undo", before, original, moved=moved, restore=backup)
        if _redo(None, target, entry, stashed) == before:
            note = f"{target.path} was created by mcpmanager's install: undo removes it"
            return Change(target, "undo", before, None, moved=moved, notes=(note,))
    return _surgical_undo(target, before, text, sections, stashed)


def _redo(
    original: bytes | None, target: Target, entry: dict[str, Any], stashed: Mapping[KeyPath, list[str]]
) -> bytes | None:
    try:
        text = decode(original, target.path) if original is not None else None
        parse(text, target.path)
        return _installed(text, target, entry, stashed).encode("utf-8")
    except InstallError:
        return None  # a backup that no longer reads cannot be what install wrote


def _surgical_undo(
    target: Target, before: bytes, text: str, sections: list[KeyPath], stashed: Mapping[KeyPath, list[str]]
) -> Change:
    """The file was edited since install: keep the edits, take out only what install put in."""
    doc = JsonText(text, "  ", str(target.path))
    doc.remove(sections[0], BRIDGE_NAME)
    if target.layout == "gemini":
        gemini_allowed.allow(doc, [BRIDGE_NAME], allowed=False)
    notes = [
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's entry removed"
    ]
    put_back: list[str] = []
    for section, names in stashed.items():
        stash = (*section[:-1], STASH_KEY)
        for name in names:
            if name in object_at(parse(doc.text, target.path), section):
                again = f"{label(section, name)} is configured again meanwhile"
                notes.append(f"{again}: the copy mcpmanager turned off stays in {render(stash)}")
                continue
            value = doc.remove(stash, name)
            if value is not None:
                doc.ensure_object(section)
                doc.set(section, name, Raw(value))
                put_back.append(label(section, name))
        if not object_at(parse(doc.text, target.path), stash):
            doc.remove(stash[:-1], STASH_KEY)
    if put_back:
        notes[0] += f" and the servers it turned off were put back ({', '.join(put_back)})"
    backups = list_backups(target.path)
    if backups:
        notes.append(f"the file as it was before the install is kept in {backups[0]}")
    after = doc.text.encode("utf-8")
    return Change(target, "undo", before, after, moved=tuple(put_back), exact=False, notes=tuple(notes))


# Writing -----------------------------------------------------------------------------------------


# State -------------------------------------------------------------------------------------------


def inspect(target: Target, config: Config | None = None, home: Path | None = None) -> TargetState:
    """Whether mcpmanager is installed in `target` and in which mode, what it turned off there, and
    which servers there mcpmanager also serves. Never raises for what is in the file."""
    if target.layout == "codex":
        return codex_install.inspect(target, installed_mode, config)
    if target.layout in ("goose", "continue"):
        return yaml_install.inspect(target, installed_mode, config)
    if target.layout in switch_install.SWITCHES:
        return switch_install.inspect(target, installed_mode, config, home)
    try:
        before = read_file(target.path)
        doc = parse(decode(before, target.path) if before is not None else None, target.path)
        served = _served(doc, target, config, home) if config is not None else {}
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    sections = _sections(doc, target.layout)
    disabled = tuple(label(s, n) for s in sections for n in object_at(doc, (*s[:-1], STASH_KEY)))
    mode = installed_mode(object_at(doc, sections[0]).get(BRIDGE_NAME))
    labels = tuple(label(section, name) for section, names in served.items() for name in names)
    return TargetState(target, mode, labels, disabled, tuple(list_backups(target.path)))


# Reading -----------------------------------------------------------------------------------------


def _sections(doc: dict[str, Any], layout: Layout) -> list[KeyPath]:
    """Where the client keeps servers in this file: the one install writes to first."""
    if layout == "vscode":
        return [("servers",)]
    found: list[KeyPath] = [("mcpServers",)]
    projects = doc.get("projects")
    if layout == "claude-code" and isinstance(projects, dict):
        found += [("projects", p, "mcpServers") for p, v in projects.items() if isinstance(v, dict)]
    return found


# Editing JSON as text ----------------------------------------------------------------------------
