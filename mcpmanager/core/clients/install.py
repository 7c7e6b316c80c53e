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
  in `~/.claude.json` (as `claude mcp add --scope user` writes it), and `"alwaysLoad": true` in
  discovery mode (its tools are never deferred behind Claude Code's own tool search).
- Windsurf, Gemini CLI: `mcpServers.mcpmanager = {"command", "args"}`, as for Claude Desktop, in
  `~/.codeium/windsurf/mcp_config.json` and in the user settings `~/.gemini/settings.json` (every
  other setting there, and its comments, stay as they are).
- Codex: a `[mcp_servers.mcpmanager]` table (`command`, `args`) appended to `~/.codex/config.toml`;
  `--disable-served` writes Codex's own `enabled = false` into each served server's table
  (`codex`).
- Zed: `context_servers.mcpmanager = {"command", "args", "env": {}}` (its documented form) in its
  `settings.json`; Cline: `mcpServers.mcpmanager = {"command", "args"}` in each of its files there
  is; `--disable-served` writes their own switch (Zed `"enabled": false`, Cline `"disabled": true`;
  `json_switched`). LM Studio: `mcpServers.mcpmanager = {"command", "args"}` in `mcp.json`, as
  Cursor's.
- Goose: a `mcpmanager` stdio extension (`enabled`, `type`, `name`, `description`, `cmd`, `args`,
  `envs`, `env_keys`, `timeout`) under `extensions` in its `config.yaml`; `--disable-served` writes
  Goose's own `enabled: false`. Continue: a `- name: mcpmanager` item (`type: stdio`, `command`,
  `args`) appended to `mcpServers` in `~/.continue/config.yaml` (its block files are only read);
  Continue has no off switch, so `--disable-served` comments the served items out (`yaml_dialects`).

- GitHub Copilot CLI: `mcpServers.mcpmanager = {"type": "stdio", "command", "args", "tools": ["*"]}`
  in `~/.copilot/mcp-config.json`, and `"deferTools": "never"` in discovery mode (as for Claude
  Code); `--disable-served` stashes, as for Cursor (its own switch is kept elsewhere). OpenCode:
  `{"type": "local", "command": [command, *args]}` in `mcp` or `mcp.servers` of its `opencode.json`,
  whichever form the file has; `--disable-served` writes that form's switch (`"enabled": false` or
  `"disabled": true`; `opencode`).

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
`<name>.mcpmanager-<YYYYMMDD-HHMMSS>Z.bak`, in UTC (`-2`… when two fall in one second; `backups`). A file that did not
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
from typing import Any

from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.change import Change, InstalledMode, Target, TargetState
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.dialect import Dialect, Spot
from mcpmanager.core.clients.dialects import READ_ONLY, dialect_of
from mcpmanager.core.clients.errors import ClientNotFound, InstallError
from mcpmanager.core.clients.importing import check_client
from mcpmanager.core.clients.json_servers import STASH_KEY
from mcpmanager.core.clients.locations import BY_KEY, Layout, client_locations
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.modes import DEFAULT_MODE, Mode

__all__ = ["STASH_KEY", "bridge_entry", "inspect", "install_targets", "installed_mode", "plan_install", "plan_undo"]


# Where -------------------------------------------------------------------------------------------


def install_targets(
    client: str, home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ
) -> list[Target]:
    """The files of `client` install writes: each that exists or whose folder does; ClientNotFound
    (naming the places looked at) when the client is not on this machine."""
    check_client(client)
    places = [w for w in client_locations(home, platform, env) if w.client == client and w.layout not in READ_ONLY]
    ran_folder = BY_KEY[client].ran_folder
    found = []
    for where in places:
        folder = where.path.parent
        if ran_folder is not None and folder == home:
            folder = home / ran_folder  # the home folder exists anyway: the client's own folder says it ran
        if where.path.is_file() or folder.is_dir():
            found.append(Target(where.client, where.label, where.path, where.layout))
    if not found:
        looked = ", ".join(str(w.path) for w in places)
        raise ClientNotFound(f"{places[0].label if places else client} not found (looked at {looked})")
    return found


def bridge_entry(
    layout: Layout, command: Sequence[str], mode: Mode | None = None, engine_mode: Mode = DEFAULT_MODE
) -> dict[str, Any]:
    """The entry that runs the bridge, in the client's own format. No mode: no `--mode`, so the
    client gets the engine's mode (the config's `proxy.mode`, `engine_mode`); a mode chosen is
    written, whatever the engine's default. In discovery mode the entry asks a client with a tool
    search of its own to load its tools at once (`Dialect.kept_loaded`): they are the meta-tools and
    the pinned ones. In direct mode it does not: the client's search is then what keeps hundreds of
    tools out of its context (the pinned ones still ask, each by its `_meta`)."""
    args = [*command[1:], "connect", *(["--mode", mode] if mode is not None else [])]
    dialect = dialect_of(layout)
    entry = dialect.bridge({"command": command[0], "args": args})
    return {**entry, **dialect.kept_loaded()} if (mode or engine_mode) == "discovery" else entry


def installed_mode(entry: Any) -> InstalledMode | None:
    """The mode an entry in a client runs mcpmanager in: `default` (no `--mode`: the engine's), or
    None when there is no entry."""
    if not isinstance(entry, dict):
        return None
    args = entry.get("args", entry.get("command", [])[1:] if isinstance(entry.get("command"), list) else [])
    args = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []  # OpenCode: the command's
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
    dialect = dialect_of(target.layout)
    before = read_file(target.path)
    text = decode(before, target.path) if before is not None else None
    dialect.guard(target, before is not None)
    dialect.check(text, target)  # refuses a file that does not read, before anything else
    home = home or Path.home()
    served = dialect.served(text, target, config, home) if config is not None else []
    notes = dialect.notes(target, config, home) if config is not None else []
    entry = bridge_entry(target.layout, command, mode, config.proxy.mode if config is not None else DEFAULT_MODE)
    after = dialect.installed(text, target, entry, served if disable_served else ())
    labels = [dialect.label(spot) for spot in served]
    return Change.install(target, before, after, mode, labels, disable_served, notes)


# Undo --------------------------------------------------------------------------------------------


def plan_undo(target: Target) -> Change:
    """What undoing the last install would write (see the module docstring); reads only."""
    dialect = dialect_of(target.layout)
    before = read_file(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = decode(before, target.path)
    dialect.check(text, target)
    entry = dialect.bridge_of(text, target)
    backups = list_backups(target.path)
    newest = read_file(backups[0]) if backups else None
    off = dialect.turned_off(text, target, newest)
    if entry is None and not off:
        note = f"mcpmanager is not installed in {target.path}: nothing to undo"
        return Change(target, "undo", before, before, notes=(note,))
    moved = tuple(dialect.label(spot) for spot in off)
    if isinstance(entry, dict):
        if newest is not None and _redo(dialect, newest, target, entry, off) == before:
            return Change(target, "undo", before, newest, moved=moved, restore=backups[0])
        if _redo(dialect, None, target, entry, off) == before:
            note = f"{target.path} was created by mcpmanager's install: undo removes it"
            return Change(target, "undo", before, None, moved=moved, notes=(note,))
    taken = dialect.take_out(text, target, off, newest)
    kept = (f"the file as it was before the install is kept in {backups[0]}",) if backups else ()
    after = taken.text.encode("utf-8")
    return Change(target, "undo", before, after, moved=taken.moved, exact=False, notes=(*taken.notes, *kept))


def _redo(
    dialect: Dialect, original: bytes | None, target: Target, entry: dict[str, Any], off: Sequence[Spot]
) -> bytes | None:
    """What installing onto `original` gives, or None when it does not read (not what install wrote)."""
    try:
        text = decode(original, target.path) if original is not None else None
        dialect.check(text, target)
        return dialect.installed(text, target, entry, off).encode("utf-8")
    except InstallError:
        return None


# State -------------------------------------------------------------------------------------------


def inspect(target: Target, config: Config | None = None, home: Path | None = None) -> TargetState:
    """Whether mcpmanager is installed in `target` and in which mode, what it turned off there, and
    which servers there mcpmanager also serves. Never raises for what is in the file."""
    dialect = dialect_of(target.layout)
    try:
        before = read_file(target.path)
        text = decode(before, target.path) if before is not None else None
        dialect.check(text, target)
        served = dialect.served(text, target, config, home or Path.home()) if config is not None else []
        mode = installed_mode(dialect.bridge_of(text, target))
        backups = list_backups(target.path)
        newest = read_file(backups[0]) if backups and mode is not None else None
        off = dialect.turned_off(text or "", target, newest)
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    labels = tuple(dialect.label(spot) for spot in served)
    return TargetState(target, mode, labels, tuple(dialect.label(s) for s in off), tuple(backups))
