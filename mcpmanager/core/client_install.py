"""`mcpmanager install --client CLIENT`: mcpmanager's bridge entry written into a client's config,
with a preview, a timestamped backup and an exact undo.

Where the entry goes (named `mcpmanager`; it runs `mcpmanager connect`, with `--mode discovery|direct`
when a mode is chosen, none to follow the engine's `proxy.mode`; the command is
`launch.mcpmanager_command()`, absolute, since GUI apps lack the shell's PATH):

- Claude Desktop, Cursor: `mcpServers.mcpmanager = {"command", "args"}` in their file (every Claude
  Desktop file there is: Windows' Store build reads its own copy).
- VS Code (and Insiders): `servers.mcpmanager = {"type": "stdio", "command", "args"}` in the user
  `mcp.json`. Never `settings.json`: it is JSONC with the user's comments and every other setting.
- Claude Code: user scope, `mcpServers.mcpmanager = {"type": "stdio", "command", "args", "env": {}}`
  in `~/.claude.json` (as `claude mcp add --scope user` writes it).

A client counts as present when its file exists, or its folder does (`~/.cursor`, `Code/User`,
`Claude/`, `~/.claude`): the file is then created.

How the file is written: the text is edited in place, never re-serialized. Only the spans that
change are touched (a member inserted after the last one, on its own line, with the file's own
indentation and line ends; a comma added where JSON needs one), so every other key, value, comment,
byte-order mark and blank line stays byte for byte. The write is atomic (temporary file, fsync,
rename) and keeps the file's mode; through a symlink, the target is written.

Turning off what mcpmanager serves (`disable_served`): none of these clients reliably honours a
per-server `disabled` flag in these files (VS Code's schema has none, Claude Code ignores it,
Cursor keeps its toggles elsewhere), so the entries of servers mcpmanager already serves (see
`client_import.served_by`) are moved, as their exact text, from the servers object into a sibling
object the client does not read, `disabledByMcpmanager` (for Claude Code, per scope: top level and
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

import difflib
import json
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from mcpmanager.core.atomic_write import write_atomic
from mcpmanager.core.client_configs import client_locations, read_client_config
from mcpmanager.core.client_import import BRIDGE_NAME, ClientNotFound, check_client, read_entries, served_by
from mcpmanager.core.config import Config, ProxyMode
from mcpmanager.core.json_text import KeyPath, clean_jsonc, json_kind, render

Layout = Literal["mcpServers", "vscode", "claude-code"]
InstalledMode = Literal["discovery", "direct", "default"]  # default: no --mode, the engine's
STASH_KEY = "disabledByMcpmanager"
_BACKUP = re.compile(r"\.mcpmanager-(\d{8}-\d{6})(?:-(\d+))?\.bak$")


class InstallError(Exception):
    """Not installed or undone; str() is one line naming the file, and the file was left as it is."""


@dataclass(frozen=True)
class Target:
    """A client config file install writes (it may not exist yet)."""

    client: str
    label: str
    path: Path
    layout: Layout


@dataclass(frozen=True)
class Change:
    """What install or undo would do to one file: the preview, and what `apply_change` writes."""

    target: Target
    action: Literal["install", "undo"]
    before: bytes | None  # the file now; None: absent
    after: bytes | None  # what it becomes; None: removed (undo of a file install created)
    mode: ProxyMode | None = None  # install: the mode written (None: no --mode, the engine's)
    moved: tuple[str, ...] = ()  # servers turned off (install) or put back (undo)
    served: tuple[str, ...] = ()  # install: served by mcpmanager and still on in the client
    restore: Path | None = None  # undo: the backup whose bytes come back
    exact: bool = True  # undo: False when the file was edited since and only mcpmanager's part went
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the file, secrets (env and header values) masked."""
        old, new = (_decode(data, self.target.path) if data else "" for data in (self.before, self.after))
        where = str(self.target.path)
        lines = difflib.unified_diff(old.splitlines(), new.splitlines(), where, f"{where} ({self.action})", lineterm="")
        secrets = sorted(_secrets(old) | _secrets(new), key=len, reverse=True)
        return "\n".join(_mask(line, secrets) for line in lines)


@dataclass(frozen=True)
class TargetState:
    """What the Clients page shows for a file."""

    target: Target
    mode: InstalledMode | None  # None: mcpmanager is not installed there
    served: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()  # servers mcpmanager turned off there
    backups: tuple[Path, ...] = ()
    problem: str | None = None


# Where -------------------------------------------------------------------------------------------


def install_targets(
    client: str, home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ
) -> list[Target]:
    """The files of `client` install writes: each that exists or whose folder does; ClientNotFound
    (naming the places looked at) when the client is not on this machine."""
    check_client(client)
    places = [w for w in client_locations(home, platform, env) if w.client == client and w.layout != "vscode-settings"]
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


def bridge_entry(layout: Layout, command: Sequence[str], mode: ProxyMode | None = None) -> dict[str, Any]:
    """The entry that runs the bridge, in the client's own format. No mode: no `--mode`, so the
    client gets the engine's mode (the config's `proxy.mode`); a mode chosen is written, whatever
    the engine's default."""
    args = [*command[1:], "connect", *(["--mode", mode] if mode is not None else [])]
    entry: dict[str, Any] = {"command": command[0], "args": args}
    if layout == "vscode":
        return {"type": "stdio", **entry}
    if layout == "claude-code":
        return {"type": "stdio", **entry, "env": {}}
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
    mode: ProxyMode | None = None,
    *,
    config: Config | None = None,
    disable_served: bool = False,
    home: Path | None = None,
) -> Change:
    """What installing would write (the preview); reads only. `config` is mcpmanager's, to find the
    servers it already serves (needed for `disable_served`)."""
    before = _read(target.path)
    text = _decode(before, target.path) if before is not None else None
    doc = _parse(text, target.path)
    served = _served(doc, target, config, home) if config is not None else {}
    labels = tuple(_label(section, name) for section, names in served.items() for name in names)
    notes = _settings_notes(target, config, home) if config is not None else []
    entry = bridge_entry(target.layout, command, mode)
    after = _installed(text, target, entry, served if disable_served else {})
    return Change(
        target,
        "install",
        before,
        after.encode("utf-8"),
        mode=mode,
        moved=labels if disable_served else (),
        served=() if disable_served else labels,
        notes=tuple(notes),
    )


def _served(doc: dict[str, Any], target: Target, config: Config, home: Path | None) -> dict[KeyPath, list[str]]:
    """The servers of the file, by section, that mcpmanager already serves (read as import reads
    them, so an imported server is recognised; mcpmanager's own entry aside)."""
    served: dict[KeyPath, list[str]] = {}
    for section in _sections(doc, target.layout):
        entries = {k: v for k, v in _get(doc, section).items() if k != BRIDGE_NAME}
        for key, server in read_entries(entries, home or Path.home()).items():
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
    before = _read(target.path)
    if before is None:
        return Change(target, "undo", None, None, notes=(f"{target.path} does not exist: nothing to undo",))
    text = _decode(before, target.path)
    doc = _parse(text, target.path)
    sections = _sections(doc, target.layout)
    entry = _get(doc, sections[0]).get(BRIDGE_NAME)
    stashed = {s: list(_get(doc, (*s[:-1], STASH_KEY))) for s in sections}
    stashed = {s: names for s, names in stashed.items() if names}
    if entry is None and not stashed:
        note = f"mcpmanager is not installed in {target.path}: nothing to undo"
        return Change(target, "undo", before, before, notes=(note,))
    moved = tuple(_label(s, name) for s, names in stashed.items() for name in names)
    if isinstance(entry, dict):
        backups = list_backups(target.path)
        for backup, original in ((b, _read(b)) for b in backups[:1]):
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
        text = _decode(original, target.path) if original is not None else None
        _parse(text, target.path)
        return _installed(text, target, entry, stashed).encode("utf-8")
    except InstallError:
        return None  # a backup that no longer reads cannot be what install wrote


def _surgical_undo(
    target: Target, before: bytes, text: str, sections: list[KeyPath], stashed: Mapping[KeyPath, list[str]]
) -> Change:
    """The file was edited since install: keep the edits, take out only what install put in."""
    doc = JsonText(text, "  ", str(target.path))
    doc.remove(sections[0], BRIDGE_NAME)
    notes = [
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's entry removed"
    ]
    put_back: list[str] = []
    for section, names in stashed.items():
        stash = (*section[:-1], STASH_KEY)
        for name in names:
            if name in _get(_parse(doc.text, target.path), section):
                again = f"{_label(section, name)} is configured again meanwhile"
                notes.append(f"{again}: the copy mcpmanager turned off stays in {render(stash)}")
                continue
            value = doc.remove(stash, name)
            if value is not None:
                doc.ensure_object(section)
                doc.set(section, name, Raw(value))
                put_back.append(_label(section, name))
        if not _get(_parse(doc.text, target.path), stash):
            doc.remove(stash[:-1], STASH_KEY)
    if put_back:
        notes[0] += f" and the servers it turned off were put back ({', '.join(put_back)})"
    backups = list_backups(target.path)
    if backups:
        notes.append(f"the file as it was before the install is kept in {backups[0]}")
    after = doc.text.encode("utf-8")
    return Change(target, "undo", before, after, moved=tuple(put_back), exact=False, notes=tuple(notes))


# Writing -----------------------------------------------------------------------------------------


def apply_change(change: Change, now: datetime | None = None) -> Path | None:
    """Write what `change` previewed; the backup made (install), if any. InstallError when the file
    changed since the preview (nothing is written then)."""
    path = Path(os.path.realpath(change.target.path))
    if _read(path) != change.before:
        raise InstallError(f"{change.target.path} changed since the preview; nothing was written (look again)")
    if not change.changed:
        return None
    mode = stat.S_IMODE(path.stat().st_mode) if change.before is not None else 0o600
    backup = None
    if change.action == "install" and change.before is not None:
        backup = _backup_path(change.target.path, now or datetime.now())  # beside the path the user knows
        write_atomic(backup, change.before, mode)
    if change.after is None:
        path.unlink()
    else:
        write_atomic(path, change.after, mode)
    if change.restore is not None:
        change.restore.unlink(missing_ok=True)  # its bytes are the file now: the stack unwinds
    return backup


def list_backups(path: Path) -> list[Path]:
    """mcpmanager's backups of `path`, newest first."""
    found = []
    for candidate in path.parent.glob(f"{_glob_escape(path.name)}.mcpmanager-*.bak"):
        match = _BACKUP.search(candidate.name)
        if match and candidate.name == path.name + match.group(0):
            found.append(((match.group(1), int(match.group(2) or 1)), candidate))
    return [candidate for _, candidate in sorted(found, reverse=True)]


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _backup_path(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d-%H%M%S")
    candidate, number = path.with_name(f"{path.name}.mcpmanager-{stamp}.bak"), 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.mcpmanager-{stamp}-{number}.bak")
    return candidate


# State -------------------------------------------------------------------------------------------


def inspect(target: Target, config: Config | None = None, home: Path | None = None) -> TargetState:
    """Whether mcpmanager is installed in `target` and in which mode, what it turned off there, and
    which servers there mcpmanager also serves. Never raises for what is in the file."""
    try:
        before = _read(target.path)
        doc = _parse(_decode(before, target.path) if before is not None else None, target.path)
        served = _served(doc, target, config, home) if config is not None else {}
    except InstallError as exc:
        return TargetState(target, None, problem=str(exc))
    sections = _sections(doc, target.layout)
    disabled = tuple(_label(s, n) for s in sections for n in _get(doc, (*s[:-1], STASH_KEY)))
    mode = installed_mode(_get(doc, sections[0]).get(BRIDGE_NAME))
    labels = tuple(_label(section, name) for section, names in served.items() for name in names)
    return TargetState(target, mode, labels, disabled, tuple(list_backups(target.path)))


# Reading -----------------------------------------------------------------------------------------


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")  # a byte-order mark stays a character, so it is written back
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path}: not UTF-8 text (bad byte at offset {exc.start}); not changed") from None


def _parse(text: str | None, path: Path) -> dict[str, Any]:
    """The document (JSONC read as the clients read it); InstallError naming the place if it does not
    read or a servers section is not an object."""
    if text is None or not text.strip():
        return {}
    try:
        doc = JsonText(text, "  ").value()
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}; not changed") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a JSON object at the top level, got {json_kind(doc)}; not changed")
    return doc


def _sections(doc: dict[str, Any], layout: Layout) -> list[KeyPath]:
    """Where the client keeps servers in this file: the one install writes to first."""
    if layout == "vscode":
        return [("servers",)]
    found: list[KeyPath] = [("mcpServers",)]
    projects = doc.get("projects")
    if layout == "claude-code" and isinstance(projects, dict):
        found += [("projects", p, "mcpServers") for p, v in projects.items() if isinstance(v, dict)]
    return found


def _get(doc: dict[str, Any], path: KeyPath) -> dict[str, Any]:
    value: Any = doc
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _label(section: KeyPath, name: str) -> str:
    return f"{name} (project {section[1]})" if section[0] == "projects" else name


def _secrets(text: str) -> set[str]:
    """Values of `env` and `headers` anywhere in the document, and `--…key/token…=` arguments."""
    found: set[str] = set()
    try:
        doc = JsonText(text, "  ").value() if text.strip() else {}
    except json.JSONDecodeError:
        return found

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("env", "headers") and isinstance(item, dict):
                    found.update(v for v in item.values() if isinstance(v, str) and len(v) >= 6)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                match = (
                    re.match(r"--?[\w-]*(?:key|token|secret|password)[\w-]*=(.{6,})", item)
                    if isinstance(item, str)
                    else None
                )
                if match:
                    found.add(match.group(1))
                walk(item)

    walk(doc)
    return found


def _mask(line: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        line = line.replace(secret, "***").replace(json.dumps(secret)[1:-1], "***")
    return line


# Editing JSON as text ----------------------------------------------------------------------------

_DECODER = json.JSONDecoder()


class Raw(str):
    """JSON text placed as it is: an entry moved verbatim, its comments and layout included."""


@dataclass(frozen=True)
class _Member:
    key: str
    at: int  # where the key starts
    start: int  # where the value starts
    end: int  # where the value ends


class JsonText:
    """A JSON or JSONC document edited in place: each change splices only the text it is about.

    Offsets come from `plain`, the text with comments and trailing commas blanked at the same
    offsets (strict JSON, the usual case, is its own plain text); the splices go into `text`."""

    def __init__(self, text: str, unit: str, source: str = "") -> None:
        self.text, self.source, self._default_unit = text, source, unit
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self._refresh()

    def value(self) -> Any:
        return json.loads(self.plain)

    def set(self, path: KeyPath, key: str, value: Any) -> None:
        """Give `key` of the object at `path` this value (a Raw text or a value to render); a value
        equal to what is there leaves the text alone."""
        obj = self._object(path)
        members, close = self._members(obj)
        old = next((m for m in reversed(members) if m.key == key), None)
        if old is not None:
            if not isinstance(value, Raw) and json.loads(self.plain[old.start : old.end]) == value:
                return
            self._splice([(old.start, old.end, self._render(value, self._line_indent(old.at)))])
            return
        # An empty object opens up unless the whole file is one line (minified); a new file opens up.
        single_line = "\n" not in self.text.strip() and self.plain.strip() != "{}"
        multiline = ("\n" in self.plain[obj : members[0].at]) if members else not single_line
        if not multiline:
            between, colon = (",", ":") if '": ' not in self.plain and ", " not in self.plain else (", ", ": ")
            text = (
                value if isinstance(value, Raw) else json.dumps(value, ensure_ascii=False, separators=(between, colon))
            )
            member = json.dumps(key, ensure_ascii=False) + colon + text
            where = members[-1].end if members else obj + 1
            self._splice([(where, where, between + member if members else member)])
            return
        indent = self._line_indent(members[0].at) if members else self._line_indent(obj) + self._unit()
        member = indent + json.dumps(key, ensure_ascii=False) + ": " + self._render(value, indent)
        nl = self.newline
        if not members:
            if self.text[obj + 1 : close].strip():  # only comments inside: keep them after the member
                self._splice([(obj + 1, obj + 1, nl + member)])
            else:
                self._splice([(obj + 1, close, nl + member + nl + self._line_indent(obj))])
            return
        last = members[-1]
        comma = self._comma_after(last.end)
        eol = self._line_end(last.end if comma is None else comma + 1)
        if eol is None:  # the closing brace (or more) on the same line: go right after the value
            self._splice([(last.end, last.end, "," + nl + member)])
        elif comma is None:  # a comma after the last value, the member on a line of its own after it
            if eol > last.end:
                self._splice([(eol, eol, nl + member), (last.end, last.end, ",")])
            else:
                self._splice([(eol, eol, "," + nl + member)])
        else:  # trailing commas (JSONC): keep the style
            self._splice([(eol, eol, nl + member + ",")])

    def remove(self, path: KeyPath, key: str) -> str | None:
        """Take `key` out of the object at `path` (absent: nothing); its value's text, verbatim."""
        obj = self._find(path)
        if obj is None or self.plain[obj] != "{":
            return None
        members, close = self._members(obj)
        index = next((i for i in range(len(members) - 1, -1, -1) if members[i].key == key), None)
        if index is None:
            return None
        m = members[index]
        value = self.text[m.start : m.end]
        line = self.text.rfind("\n", 0, m.at) + 1
        own_line = not self.text[line : m.at].strip()
        comma = self._comma_after(m.end)
        last = index == len(members) - 1
        edits: list[tuple[int, int, str]] = []
        if own_line:
            start, end = line, (comma + 1 if comma is not None else m.end)
            eol = self._line_end(end)
            if eol is not None:  # the whole line goes, its line end too
                end = eol + (2 if self.text.startswith("\r\n", eol) else 1 if eol < len(self.text) else 0)
            if last and index > 0 and comma is None:
                before = self._comma_after(members[index - 1].end)
                assert before is not None
                edits.append((before, before + 1, ""))
        elif not last:
            start, end = m.at, members[index + 1].at
        else:
            start, end = (members[index - 1].end if index else m.at), (comma + 1 if comma is not None else m.end)
        edits.append((start, end, ""))
        self._splice(edits)
        _, close = self._members(obj)
        if not self.text[obj + 1 : close].strip() and obj + 1 < close:
            self._splice([(obj + 1, close, "")])  # an object left empty is written `{}`
        return value

    def ensure_object(self, path: KeyPath) -> None:
        """Make the objects along `path` that are missing."""
        for depth in range(len(path)):
            if self._find(path[: depth + 1]) is None:
                self.set(path[:depth], str(path[depth]), {})
        self._object(path)

    # Internals -------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        text = self.text
        plain = " " + text[1:] if text.startswith("\ufeff") else text
        try:
            json.loads(plain)
        except ValueError:
            plain = clean_jsonc(text)  # comments or trailing commas: blank them, offsets unchanged
        self.plain = plain

    def _splice(self, edits: list[tuple[int, int, str]]) -> None:
        for start, end, new in sorted(edits, reverse=True):
            self.text = self.text[:start] + new + self.text[end:]
        self._refresh()

    def _skip(self, i: int) -> int:
        while i < len(self.plain) and self.plain[i] in " \t\r\n":
            i += 1
        return i

    def _find(self, path: KeyPath) -> int | None:
        """Where the value at `path` starts (keys only; the last of a key written twice)."""
        at = self._skip(0)
        if at >= len(self.plain):
            return None
        for part in path:
            if at >= len(self.plain) or self.plain[at] != "{":
                return None
            found = [m for m in self._members(at)[0] if m.key == part]
            if not found:
                return None
            at = found[-1].start
        return at

    def _object(self, path: KeyPath) -> int:
        at = self._find(path)
        if at is None or self.plain[at] != "{":
            got = "nothing" if at is None else json_kind(_DECODER.raw_decode(self.plain, at)[0])
            raise InstallError(
                f"{self.source}: {render(path) or 'the top level'}: expected an object, got {got}; not changed"
            )
        return at

    def _members(self, obj: int) -> tuple[list[_Member], int]:
        """The members of the object starting at `obj` (values skipped at C speed) and its `}`."""
        plain, members = self.plain, []
        i = self._skip(obj + 1)
        while plain[i] != "}":
            key, after = _DECODER.raw_decode(plain, i)
            start = self._skip(self._skip(after) + 1)
            end = _DECODER.raw_decode(plain, start)[1]
            members.append(_Member(key, i, start, end))
            i = self._skip(end)
            if plain[i] == ",":
                i = self._skip(i + 1)
        return members, i

    def _comma_after(self, i: int) -> int | None:
        """The comma after a value at `i`, past whitespace and comments; None if there is none."""
        text, n = self.text, len(self.text)
        while i < n:
            if text[i] in " \t\r\n":
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                i = n if end < 0 else end + 2
            else:
                break
        return i if i < n and text[i] == "," else None

    def _line_end(self, i: int) -> int | None:
        """Where the line ends (its `\r\n` or `\n`), if only spaces and comments follow `i` on it."""
        text, n = self.text, len(self.text)
        while i < n:
            if text[i] in " \t":
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                return n if end < 0 else end - (text[end - 1] == "\r")
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0 or "\n" in text[i:end]:
                    return None
                i = end + 2
            else:
                break
        return i if i == n or text.startswith(("\r\n", "\n"), i) else None

    def _line_indent(self, i: int) -> str:
        line = self.text.rfind("\n", 0, i) + 1
        return re.match(r"[ \t]*", self.text[line:]).group(0)  # type: ignore[union-attr]

    def _unit(self) -> str:
        """The file's indentation step: its top-level members' indentation."""
        root = self._skip(0)
        if root < len(self.plain) and self.plain[root] == "{":
            for m in self._members(root)[0]:
                indent = self._line_indent(m.at)
                if indent and not self.text[self.text.rfind("\n", 0, m.at) + 1 : m.at].strip():
                    return indent
        return self._default_unit

    def _render(self, value: Any, indent: str) -> str:
        """A value as the clients lay out their files: objects one member a line, lists of plain
        values on one line."""
        if isinstance(value, Raw):
            return str(value)
        flat = not isinstance(value, dict | list) or not value
        if flat or (isinstance(value, list) and not any(isinstance(v, dict | list) for v in value)):
            return json.dumps(value, ensure_ascii=False)
        inner, nl = indent + self._unit(), self.newline
        if isinstance(value, dict):
            items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {self._render(v, inner)}" for k, v in value.items()]
            return "{" + nl + ("," + nl).join(items) + nl + indent + "}"
        items = [inner + self._render(v, inner) for v in value]
        return "[" + nl + ("," + nl).join(items) + nl + indent + "]"
