"""`mcpmanager export --to CLIENT`: mcpmanager's servers written into a client's own config file, in
that client's format (`export_entries`), to hand a server back to a client or to leave mcpmanager.

The same guarantees as install: a preview first (the diff, secrets masked), the file edited as text
by its layout's dialect (`dialect`: every other byte stays), a timestamped backup, an atomic write,
an exact undo.

What is written, and what is not (each server gets one line saying which):

- `+` written; `=` the client has it already (the same server, read as import reads it): nothing
  to do; `~` replaced (`--replace`) a different entry of that name; `!` not written, and why.
- A name the client already uses for a different server is never overwritten silently: skipped,
  unless `--replace` (then only that entry's value changes).
- A value holding a `${keyring:NAME}` reference: no client reads mcpmanager's keyring, and
  writing the secret into a client's file in plain text must be asked for. So such a server is
  skipped, naming the values, unless `--with-secrets`: then the secrets are read from the keyring
  into the file, and the preview names each one (masked); when others than its owner may read the
  file (POSIX modes), the plan says who (`readable_by`), for a warning: the mode is the user's to
  change. Secrets mcpmanager's config holds in plain text are written as they are (masked in the
  preview).
- A server that is off in mcpmanager is written off where the client has a switch (Windsurf's
  `disabled`, Codex's `enabled = false`); elsewhere it is skipped, unless named in `--servers`: then
  it is written on, saying so.
- mcpmanager's own entry (the bridge, named `mcpmanager`) is never written or replaced.
- Continue: no config.yaml is created beside a config.json (`continue_yaml.refuse_hiding_config_json`).

Backups, the record of what was written, and `--undo`: `export_undo`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.backups import unchanged_since_preview
from mcpmanager.core.clients.change import Change, Target
from mcpmanager.core.clients.client_file import decode, read_file
from mcpmanager.core.clients.dialects import dialect_of
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.export_entries import Unsupported, Writer, writer_for
from mcpmanager.core.clients.export_undo import KeyPath, secret_paths, write_record
from mcpmanager.core.clients.served import BRIDGE_NAME, is_bridge, same_definition
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.names import free_name
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig, secret_values
from mcpmanager.core.system.atomic_write import write_atomic
from mcpmanager.core.vault.references import REFERENCE, filled_by
from mcpmanager.core.vault.store import Vault, VaultError


class ExportError(Exception):
    """Nothing to export as asked (an unknown server, no servers); str() is one line."""


@dataclass(frozen=True)
class Line:
    """What export does with one server: `+` written, `~` replaced, `=` there already, `!` not written."""

    mark: str
    name: str  # mcpmanager's
    text: str = ""

    def __str__(self) -> str:
        return f"  {self.mark} {self.name}{': ' + self.text if self.text else ''}"


@dataclass(frozen=True)
class ExportPlan:
    change: Change
    lines: tuple[Line, ...]
    written: dict[str, Any] = field(default_factory=dict, repr=False)  # the client's name → entry
    replaced: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()  # `github: env GITHUB_TOKEN`: values read from the keyring
    bridge: bool = False  # mcpmanager's own entry is in the file (the servers would load twice)
    masked: dict[str, list[KeyPath]] = field(default_factory=dict, repr=False)  # `export_undo.secret_paths`
    readable_by: str = ""  # `its group`, `other users`: who else may read the file the keyring's secrets go into


# Choosing ------------------------------------------------------------------------------------------


def chosen_servers(config: Config, names: Sequence[str] | None, source: Path) -> list[ServerConfig]:
    """The servers to export: those named (in the config's order), or all; ExportError otherwise."""
    if not config.servers:
        raise ExportError(f"no servers in {source}: nothing to export")
    if names is None:
        return list(config.servers.values())
    unknown = [n for n in dict.fromkeys(names) if n not in config.servers]
    if unknown:
        known = ", ".join(config.servers)
        raise ExportError(f"no server {', '.join(map(repr, unknown))} in {source} (it has: {known})")
    if not names:
        raise ExportError("--servers names no server")
    return [server for name, server in config.servers.items() if name in names]


def references(server: ServerConfig) -> list[str]:
    """Where the server's values refer to the keyring: `env GITHUB_TOKEN`, `header Authorization`…"""
    if isinstance(server, StdioServerConfig):
        values = [("command", server.command), *((f"argument {i + 1}", a) for i, a in enumerate(server.args))]
        values += [(f"env {k}", v) for k, v in server.env.items()] + [("cwd", server.cwd or "")]
    else:
        values = [("url", server.url), *((f"header {k}", v) for k, v in server.headers.items())]
    return [where for where, value in values if REFERENCE.search(value)]


def with_secrets(server: ServerConfig, lookup: Callable[[str], str | None]) -> tuple[ServerConfig, set[str]]:
    """The server with its keyring references filled in, and the secrets filled in (to mask them)."""
    found: set[str] = set()

    def remembered(name: str) -> str | None:
        value = lookup(name)
        if value is not None:
            found.add(value)
        return value

    def fill(value: str, where: str) -> str:
        return filled_by(value, remembered, f"server {server.name!r}: {where}")

    if isinstance(server, StdioServerConfig):
        filled: ServerConfig = replace(
            server,
            command=fill(server.command, "command"),
            args=[fill(a, f"argument {i + 1}") for i, a in enumerate(server.args)],
            env={k: fill(v, f"env {k}") for k, v in server.env.items()},
            cwd=fill(server.cwd, "cwd") if server.cwd is not None else None,
        )
    else:
        filled = replace(
            server, url=fill(server.url, "url"), headers={k: fill(v, f"header {k}") for k, v in server.headers.items()}
        )
    return filled, found


# Planning ------------------------------------------------------------------------------------------


def plan_export(
    target: Target,
    servers: Sequence[ServerConfig],
    *,
    named: bool = False,
    replace_taken: bool = False,
    secrets_from: Vault | None = None,
    home: Path | None = None,
) -> ExportPlan:
    """What exporting `servers` into `target` would write (the preview); reads only. `named`: the
    user chose them (`--servers`), so a server that is off goes out on where the client has no
    switch; `secrets_from`: `--with-secrets`, the keyring references are read from it."""
    try:
        writer = writer_for(target.client)
    except Unsupported as exc:
        raise InstallError(str(exc)) from None
    before = read_file(target.path)
    dialect_of(target.layout).guard(target, before is not None)  # Continue: not beside its config.json
    text = decode(before, target.path) if before is not None else None
    existing = dialect_of(target.layout).entries(text, target)
    theirs = dialect_of(target.layout).as_imported(text, target, existing, home or Path.home())
    planner = _Planner(target, writer, text, existing, theirs)
    planner.named, planner.replace_taken, planner.vault = named, replace_taken, secrets_from
    lines = tuple(planner.line(server) for server in servers)
    entries, replaced = planner.entries, planner.replaced
    after = before
    if entries:
        after = dialect_of(target.layout).with_entries(text, target, entries, replaced).encode("utf-8")
    change = Change(target, "export", before, after, secrets=tuple(sorted(planner.secrets)))
    bridge = BRIDGE_NAME in existing and any(not e.get("disabled") and e.get("enabled", True) for e in entries.values())
    readable_by = _readable_by(target.path) if planner.places and before is not None else ""
    masked = {name: planner.masked[name] for name in entries}
    return ExportPlan(change, lines, entries, tuple(replaced), tuple(planner.places), bridge, masked, readable_by)


def _readable_by(path: Path) -> str:
    """Who but its owner may read the file (POSIX modes): said, never changed behind the user's back."""
    if os.name != "posix":
        return ""
    mode = Path(os.path.realpath(path)).stat().st_mode
    who = [name for bit, name in ((stat.S_IRGRP, "its group"), (stat.S_IROTH, "other users")) if mode & bit]
    return " and ".join(who)


@dataclass
class _Planner:
    """Decides, server by server, what goes into one client's file (the entries) and says it (a Line)."""

    target: Target
    writer: Writer
    text: str | None
    existing: dict[str, Any]  # the client's entries now, by name
    theirs: dict[str, ServerConfig]  # the same, read as import reads them
    named: bool = False
    replace_taken: bool = False
    vault: Vault | None = None
    entries: dict[str, Any] = field(default_factory=dict)  # the client's name → entry to write
    replaced: list[str] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)  # values read from the keyring, to mask
    places: list[str] = field(default_factory=list)  # where they go: `github: env GITHUB_TOKEN`
    cache: dict[str, str | None] = field(default_factory=dict)
    masked: dict[str, list[KeyPath]] = field(default_factory=dict)  # where each entry holds a secret

    def line(self, server: ServerConfig) -> Line:
        label, note = self.target.label, ""
        if is_bridge(server):
            return Line("!", server.name, "mcpmanager's own entry (the bridge to it): not exported")
        if server.disabled and not self.writer.has_switch:
            if not self.named:
                why = f"off in mcpmanager, and {label} has no switch to keep a server off: not exported"
                return Line("!", server.name, why + " (name it in --servers to export it on)")
            server, note = replace(server, disabled=False), f"written on ({label} has no switch to keep it off)"
        places, values = references(server), set[str]()
        if places and self.vault is None:
            many = len(places) > 1
            return Line(
                "!",
                server.name,
                f"{', '.join(places)} refer{'' if many else 's'} to the keyring, which {label} cannot read: not "
                f"exported (--with-secrets writes the secret{'s' if many else ''} into {self.target.path})",
            )
        if places:
            try:
                server, values = with_secrets(server, self._lookup)
            except VaultError as exc:
                return Line("!", server.name, f"{exc}: not exported")
            self.secrets |= values
            self.places += [f"{server.name}: {place}" for place in places]
        try:
            entry = dialect_of(self.target.layout).shape(self.text, self.writer.entry(server))
        except Unsupported as exc:
            return Line("!", server.name, f"{exc}: not exported")
        name = self.writer.name(server.name)
        if name != server.name:
            note = _joined(note, f"written as {name!r} ({label} does not accept {server.name!r})")
        if name in self.entries:  # two servers of mcpmanager's under one name the client accepts
            taken, name = name, free_name(name, {*self.entries, *self.existing})
            note = _joined(note, f"written as {name!r} (another server exported now is {taken!r})")
        if name == BRIDGE_NAME:
            return Line("!", server.name, f"{BRIDGE_NAME!r} is mcpmanager's own entry in {label}: not exported")
        if name in self.existing:
            refused = self._taken(name, entry, server)
            if refused is not None:
                return refused
            self.replaced.append(name)
            note = _joined(f"replaces {label}'s {name!r}", note)
        self.entries[name] = entry
        self.masked[name] = secret_paths(entry, {*secret_values(server), *values})  # for the record
        return Line("~" if name in self.replaced else "+", server.name, note)

    def _taken(self, name: str, entry: dict[str, Any], server: ServerConfig) -> Line | None:
        """The line for a name the client has already, or None when `--replace` overwrites it."""
        label, there = self.target.label, self.theirs.get(name)
        same = there is not None and same_definition(there, server)
        if self.existing[name] == entry or (same and there is not None and there.disabled == server.disabled):
            return Line("=", server.name, f"{label} has it already as {name!r}")
        if not self.replace_taken:
            if same and there is not None:  # the same server, on in one and off in the other
                state = "off" if there.disabled else "on"
                why = f"{label} has it as {name!r}, {state} there: kept (--replace writes mcpmanager's over it)"
            else:
                why = f"{label} has a different server named {name!r}: kept (--replace writes mcpmanager's over it)"
            return Line("!", server.name, why)
        if dialect_of(self.target.layout).entry_text(self.text or "", self.target, name) is None:
            why = f"{label}'s {name!r} is not written in a way mcpmanager can replace as text (a table, block style)"
            return Line("!", server.name, why)
        return None

    def _lookup(self, name: str) -> str | None:
        """Each keyring entry read once, however many servers refer to it."""
        if name not in self.cache and self.vault is not None:
            self.cache[name] = self.vault.get(name)
        return self.cache.get(name)


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# Writing -------------------------------------------------------------------------------------------


def apply_export(plan: ExportPlan, now: datetime | None = None) -> Path | None:
    """Write what `plan` previewed, with a backup and a record beside the file (`export_undo`); the
    backup made, if any. InstallError when the file changed since the preview (nothing is written)."""
    change = plan.change
    path = unchanged_since_preview(change)
    if not change.changed or change.after is None:
        return None
    mode = stat.S_IMODE(path.stat().st_mode) if change.before is not None else 0o600
    after, when = change.after, now or datetime.now(UTC)
    backup = write_record(change.target.path, change.before, after, plan.written, plan.replaced, when, plan.masked)
    write_atomic(path, change.after, mode)
    return backup
