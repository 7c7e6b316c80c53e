"""Claude-style JSON: a servers object of name → `{command, args, env}` or `{url, headers}` entries.
Claude Desktop, Cursor, LM Studio (`mcpServers`), VS Code (`servers`, typed entries, tabs in a new
file), Claude Code (`mcpServers` at the top and in each project), Windsurf and Gemini CLI
(`mcpServers`, their own remote-URL keys; Gemini CLI's `mcp.allowed` list follows what is written).

None of these clients reliably honours a per-server off switch in these files (VS Code's schema has
none, Claude Code ignores `disabled`, Cursor keeps its toggles elsewhere, LM Studio documents none),
so install turns a server off by moving its entry, as its exact text, from the servers object into a
sibling object the client does not read, `disabledByMcpmanager` (per scope for Claude Code); undo
moves it back. The file is edited as text (`json_edit`): every other byte stays.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import gemini_allowed
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.client_file import label, object_at, parse
from mcpmanager.core.clients.dialect import Dialect, PutBack, Spot, TakenOut, edited_note
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.json_edit import JsonText, Raw
from mcpmanager.core.clients.json_reading import PLAIN, Reading, read_entries, read_json
from mcpmanager.core.clients.locations import Layout
from mcpmanager.core.clients.served import BRIDGE_NAME, served_by
from mcpmanager.core.config.json_text import KeyPath, render
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig

STASH_KEY = "disabledByMcpmanager"


@dataclass(frozen=True)
class JsonServers(Dialect):
    layout: Layout
    section: KeyPath = ("mcpServers",)  # where install and export write (Claude Code: the user scope)
    unit: str = "  "  # the indentation of a new file, as the client writes one
    typed: bool = False  # mcpmanager's entry says `"type": "stdio"`
    extra: tuple[tuple[str, Any], ...] = ()  # and has these members after `command` and `args`
    loaded: tuple[tuple[str, Any], ...] = ()  # and these last, in discovery mode (`Dialect.kept_loaded`)
    allowlist: bool = False  # `mcp.allowed` names the servers the client starts (Gemini CLI)
    reading: Reading = PLAIN  # how import reads the file: its own keys, and where (its projects too)
    settings_beside: Reading | None = None  # a settings.json beside the file has servers too, never edited (VS Code)

    def _doc(self, text: str | None, target: Target) -> dict[str, Any]:
        return parse(text, target.path)

    def sections(self, doc: dict[str, Any]) -> list[KeyPath]:
        """Where the client keeps servers in this file: the one install writes to first."""
        found: list[KeyPath] = [self.section]
        projects = doc.get("projects")
        if self.reading.projects and isinstance(projects, dict):
            found += [("projects", p, "mcpServers") for p, v in projects.items() if isinstance(v, dict)]
        return found

    def read(self, text: str, path: Path, home: Path) -> tuple[list[ServerConfig], list[str]]:
        return read_json(text, path, self.reading, home)

    # Install and undo --------------------------------------------------------------------------

    def check(self, text: str | None, target: Target) -> None:
        self._doc(text, target)

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {**({"type": "stdio"} if self.typed else {}), **entry, **dict(self.extra)}

    def kept_loaded(self) -> dict[str, Any]:
        return dict(self.loaded)

    def bridge_of(self, text: str | None, target: Target) -> Any:
        return object_at(self._doc(text, target), self.section).get(BRIDGE_NAME)

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        """Read as import reads them, so an imported server is recognised (mcpmanager's own entry aside)."""
        doc = self._doc(text, target)
        found: list[Spot] = []
        for section in self.sections(doc):
            entries = {k: v for k, v in object_at(doc, section).items() if k != BRIDGE_NAME}
            for key, server in read_entries(entries, home, self.reading).items():
                if served_by(server, config) is not None:
                    found.append((section, key))
        return found

    def label(self, spot: Spot) -> str:
        return label(*spot)

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        blank = text is None or not text.strip()
        doc = JsonText("{}\n" if blank else str(text), self.unit, str(target.path))
        for section, name in disable:
            stash = (*section[:-1], STASH_KEY)
            value = doc.remove(section, name)
            if value is not None:
                doc.ensure_object(stash)
                doc.set(stash, name, Raw(value))
        doc.ensure_object(self.section)
        doc.set(self.section, BRIDGE_NAME, entry)
        if self.allowlist:
            gemini_allowed.allow(doc, [BRIDGE_NAME])
        return doc.text

    def off_wording(self, text: str) -> str:
        return f'kept under "{STASH_KEY}"'

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        doc = self._doc(text, target)
        return [(s, name) for s in self.sections(doc) for name in object_at(doc, (*s[:-1], STASH_KEY))]

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        doc = JsonText(text, "  ", str(target.path))
        doc.remove(self.section, BRIDGE_NAME)
        if self.allowlist:
            gemini_allowed.allow(doc, [BRIDGE_NAME], allowed=False)
        notes: list[str] = []
        put_back: list[str] = []
        for section, name in off:
            stash = (*section[:-1], STASH_KEY)
            if name in object_at(parse(doc.text, target.path), section):
                again = f"{label(section, name)} is configured again meanwhile"
                notes.append(f"{again}: the copy mcpmanager turned off stays in {render(stash)}")
            else:
                value = doc.remove(stash, name)
                if value is not None:
                    doc.ensure_object(section)
                    doc.set(section, name, Raw(value))
                    put_back.append(label(section, name))
            if not object_at(parse(doc.text, target.path), stash):
                doc.remove(stash[:-1], STASH_KEY)
        lead = edited_note(target, "entry", ())
        if put_back:
            lead += f" and the servers it turned off were put back ({', '.join(put_back)})"
        return TakenOut(doc.text, tuple(put_back), (lead, *notes))

    def notes(self, target: Target, config: Config, home: Path) -> list[str]:
        """VS Code: servers mcpmanager serves that are in settings.json, which is never edited."""
        settings = target.path.with_name("settings.json")
        if self.settings_beside is None or not settings.is_file():
            return []
        try:
            servers, _ = read_json(settings.read_text(encoding="utf-8-sig"), settings, self.settings_beside, home)
        except (OSError, UnicodeDecodeError):
            return []  # a note only: what cannot be read names nothing
        names = [s.name for s in servers if served_by(s, config) is not None]
        if not names:
            return []
        return [
            f"{settings} also has {', '.join(names)}, served by mcpmanager: mcpmanager does not edit settings.json "
            '(comments, every other setting); remove them from its "mcp" section to not load their tools twice'
        ]

    # Export --------------------------------------------------------------------------------------

    def entries(self, text: str | None, target: Target) -> dict[str, Any]:
        value: Any = self._doc(text, target)
        for part in self.section:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, dict):
            raise InstallError(f"{target.path}: {render(self.section)}: expected an object of servers; not changed")
        return dict(value or {})

    def as_imported(
        self, text: str | None, target: Target, existing: dict[str, Any], home: Path
    ) -> dict[str, ServerConfig]:
        return read_entries(existing, home, self.reading)

    def with_entries(
        self, text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]
    ) -> str:
        """Each entry set (added, or its value replaced in place)."""
        blank = text is None or not text.strip()
        doc = JsonText("{}\n" if blank else str(text), self.unit, str(target.path))
        doc.ensure_object(self.section)
        for name, entry in entries.items():
            doc.set(self.section, name, entry)
        if self.allowlist:  # or Gemini CLI blocks them
            gemini_allowed.allow(doc, list(entries))
        got = self.entries(doc.text, target)
        if any(got.get(name) != entry for name, entry in entries.items()):
            raise InstallError(
                f"{target.path}: mcpmanager cannot write its entries into this file safely as text; not changed"
            )
        return doc.text

    def entry_text(self, text: str, target: Target, name: str) -> str | None:
        return JsonText(text, "  ", str(target.path)).remove(self.section, name)

    def without(self, text: str, target: Target, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
        doc = JsonText(text, "  ", str(target.path))
        expected = copy.deepcopy(parse(text, target.path))
        entries: Any = expected
        for part in self.section:
            entries = entries.get(part) if isinstance(entries, dict) else None
        for name in names:
            if name in put_back:
                doc.set(self.section, name, Raw(put_back[name][0]))
                entries[name] = copy.deepcopy(put_back[name][1])
            else:
                doc.remove(self.section, name)
                entries.pop(name, None)
        if parse(doc.text, target.path) != expected:
            raise unsafe_undo(target.path)
        return doc.text


def unsafe_undo(path: Path) -> InstallError:
    return InstallError(f"{path}: mcpmanager cannot take its entries out of this file safely as text; nothing undone")
