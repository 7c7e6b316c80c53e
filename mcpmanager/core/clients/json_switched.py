"""JSON with a per-server off switch the client honours: Zed's `context_servers` (`"enabled": false`,
`zed`) and Cline's `mcpServers` (`"disabled": true`, `cline`). Install turns a served server off with
that switch (its value replaced where the entry has it, else a member added after the entry's last
one) instead of the `disabledByMcpmanager` stash of `json_servers`. Nothing else goes into the file:
which servers mcpmanager turned off is read from the backup taken before the install (on there, off
now), so undo after an edit of the file gives each its switch back as the backup has it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import opencode
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.client_file import decode, object_at, parse
from mcpmanager.core.clients.dialect import PutBack, Spot, TakenOut, edited_note
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.json_edit import JsonText
from mcpmanager.core.clients.json_reading import read_entries
from mcpmanager.core.clients.json_servers import JsonServers
from mcpmanager.core.clients.served import BRIDGE_NAME, served_by
from mcpmanager.core.config.model import Config


@dataclass(frozen=True)
class JsonSwitched(JsonServers):
    key: str = "enabled"  # the switch's key
    off: bool = False  # the value that turns a server off

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        entries = {k: v for k, v in object_at(self._doc(text, target), self.section).items() if k != BRIDGE_NAME}
        found = read_entries(entries, home, self.reading)
        return [(self.section, n) for n, server in found.items() if not server.disabled and served_by(server, config)]

    def label(self, spot: Spot) -> str:
        return spot[1]

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        blank = text is None or not text.strip()
        doc = JsonText("{}\n" if blank else str(text), "  ", str(target.path))
        for section, name in disable:
            doc.set((*section, name), self.key, self.off)
        doc.ensure_object(self.section)
        doc.set(self.section, BRIDGE_NAME, entry)
        return doc.text

    def off_wording(self, text: str) -> str:
        return f"{json.dumps(self.key)}: {json.dumps(self.off)}"

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        """The servers off now that were on in the backup (the file before the install)."""
        was = object_at(self._parsed(backup, target) or {}, self.section)

        def is_off(entry: Any) -> bool:
            return isinstance(entry, dict) and entry.get(self.key) is self.off

        def is_on(entry: Any) -> bool:
            return isinstance(entry, dict) and entry.get(self.key) is not self.off

        now = object_at(self._doc(text, target), self.section)
        return [(self.section, n) for n, entry in now.items() if is_off(entry) and is_on(was.get(n))]

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        doc = JsonText(text, "  ", str(target.path))
        doc.remove(self.section, BRIDGE_NAME)
        was = object_at(self._parsed(backup, target) or {}, self.section)
        for section, name in off:
            old = was[name]
            if self.key in old:
                doc.set((*section, name), self.key, old[self.key])
            else:
                doc.remove((*section, name), self.key)
        names = tuple(name for _, name in off)
        return TakenOut(doc.text, names, (edited_note(target, "entry", names),))

    def _parsed(self, data: bytes | None, target: Target) -> dict[str, Any] | None:
        try:
            return parse(decode(data, target.path), target.path) if data is not None else None
        except InstallError:
            return None


@dataclass(frozen=True)
class OpenCode(JsonSwitched):
    """OpenCode's `mcp` (`enabled: false`) or `mcp.servers` (`disabled: true`), as the file has it
    (`opencode`): each edit goes through the switched dialect of the file's form, and an entry
    written is shaped to that form."""

    def form(self, text: str | None) -> JsonSwitched:
        try:
            section = opencode.section_of(parse(text, Path("opencode.json")))
        except InstallError:
            section = opencode.NESTED  # check() refuses the file before anything is written
        key, off = opencode.SWITCHES[section]
        return JsonSwitched(self.layout, section, self.unit, reading=self.reading, key=key, off=off)

    def shape(self, text: str | None, entry: dict[str, Any]) -> dict[str, Any]:
        return opencode.shaped(entry, self.form(text).section)

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {"type": "local", "command": [entry["command"], *entry["args"]], "enabled": True}

    def bridge_of(self, text: str | None, target: Target) -> Any:
        return self.form(text).bridge_of(text, target)

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        return self.form(text).served(text, target, config, home)

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        return self.form(text).installed(text, target, self.shape(text, entry), disable)

    def off_wording(self, text: str) -> str:
        return self.form(text).off_wording(text)

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        return self.form(text).turned_off(text, target, backup)

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        return self.form(text).take_out(text, target, off, backup)

    def entries(self, text: str | None, target: Target) -> dict[str, Any]:
        return self.form(text).entries(text, target)

    def with_entries(
        self, text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]
    ) -> str:
        return self.form(text).with_entries(text, target, entries, replace)

    def entry_text(self, text: str, target: Target, name: str) -> str | None:
        return self.form(text).entry_text(text, target, name)

    def without(self, text: str, target: Target, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
        return self.form(text).without(text, target, names, put_back)
