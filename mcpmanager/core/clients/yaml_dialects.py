"""Goose's `config.yaml` (an `extensions` mapping, `goose`) and Continue's `config.yaml` (an
`mcpServers` list, `continue_yaml`) as dialects; export's edits of both are in `export_yaml`.

- Install writes mcpmanager's entry (an extension for Goose, a list item for Continue) as whole
  lines after the last server, in the file's own indentation and line ends; an entry for another
  mode is replaced in place, its own lines only. `--disable-served`: Goose's own `enabled: false`;
  for Continue, which has no off switch in its files, the item's lines commented out.
- Every edit is checked by parsing the result: it must be the document as it was with only those
  values changed, else nothing is written (InstallError). A file that does not parse is refused
  with its line and column.
- Undo after the file was edited (Goose rewrites its file itself): only mcpmanager's entry goes and
  what it turned off is turned on again, the rest kept (when Goose rewrote the file, mcpmanager's
  marks went with its comments: what was on in the backup and is off now is what install turned off).

Why hand-written YAML editing and not a round-trip library: the same reason as Codex's TOML
(docs/clients.md): the user's lines must stay where and as they are, with only whole lines added,
and each edit is checked by reading the result with the clients' own YAML 1.2 types (`yaml_text`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import continue_yaml, goose
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.dialect import Dialect, PutBack, Spot, TakenOut, edited_note
from mcpmanager.core.clients.export_yaml import Section, yaml_entries, yaml_entry_text, yaml_with, yaml_without
from mcpmanager.core.clients.served import served_by
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig

BRIDGE_DESCRIPTION = "mcpmanager: the servers it manages, through one connection"


class _Yaml(Dialect):
    spec: Section

    def entries(self, text: str | None, target: Target) -> dict[str, Any]:
        return yaml_entries(text, self.spec, target.path)

    def with_entries(
        self, text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]
    ) -> str:
        return yaml_with(text, self.spec, target.path, entries, replace)

    def entry_text(self, text: str, target: Target, name: str) -> str | None:
        return yaml_entry_text(text, self.spec, target.path, name)

    def without(self, text: str, target: Target, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
        return yaml_without(text, self.spec, target.path, names, put_back)


def _bridge_server(entry: dict[str, Any]) -> StdioServerConfig:
    return StdioServerConfig(goose.BRIDGE, entry["command"], list(entry["args"]))


class Goose(_Yaml):
    spec = Section(goose.SECTION, listed=False, what="a mapping of extensions")

    def read(self, text: str, path: Path, home: Path) -> tuple[list[ServerConfig], list[str]]:
        return goose.read_servers(text, path)

    def check(self, text: str | None, target: Target) -> None:
        goose.document(text, target.path)

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        return goose.extension_of(_bridge_server(entry), BRIDGE_DESCRIPTION)

    def bridge_of(self, text: str | None, target: Target) -> Any:
        return goose.bridge_of(goose.document(text, target.path)[0])

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        found = goose.entries(text or "", target.path).items()
        return [
            ((goose.SECTION,), n)
            for n, (s, on) in found
            if n != goose.BRIDGE and on and served_by(s, config) is not None
        ]

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        return goose.installed(text, target.path, entry, [name for _, name in disable])

    def off_wording(self, text: str) -> str:
        return "enabled: false"

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        return [((goose.SECTION,), name) for name in goose.turned_off(text, target.path)]

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        names = [name for _, name in off]
        if not names:  # Goose rewrote the file, mcpmanager's comments with it: on before the install, off now
            kept = backup.decode("utf-8", "replace") if backup is not None else None
            names = goose.off_since(text, target.path, kept)
        after = goose.take_out(text, target.path, names)
        goose.document(after, target.path)
        return TakenOut(after, tuple(names), (edited_note(target, "extension", names),))

    def as_imported(
        self, text: str | None, target: Target, existing: dict[str, Any], home: Path
    ) -> dict[str, ServerConfig]:
        return {name: server for name, (server, _) in goose.entries(text or "", target.path).items()}


class Continue(_Yaml):
    spec = Section(continue_yaml.SECTION, listed=True, what="a list of servers", new_file=continue_yaml.NEW_FILE)

    def read(self, text: str, path: Path, home: Path) -> tuple[list[ServerConfig], list[str]]:
        return continue_yaml.read_servers(text, path)  # config.yaml and block files alike

    def check(self, text: str | None, target: Target) -> None:
        continue_yaml.document(text, target.path)

    def guard(self, target: Target, exists: bool) -> None:
        continue_yaml.refuse_hiding_config_json(target.path, exists)

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        return continue_yaml.item_of(_bridge_server(entry))

    def bridge_of(self, text: str | None, target: Target) -> Any:
        return continue_yaml.bridge_of(continue_yaml.document(text, target.path)[0])

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        listed = continue_yaml.entries(text or "", target.path)
        return [
            ((continue_yaml.SECTION,), n)
            for n, s in listed
            if n != continue_yaml.BRIDGE and served_by(s, config) is not None
        ]

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        return continue_yaml.installed(text, target.path, entry, [name for _, name in disable])

    def off_wording(self, text: str) -> str:
        return "commented out"  # Continue has no switch

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        return [((continue_yaml.SECTION,), name) for name in continue_yaml.turned_off(text, target.path)]

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        after = continue_yaml.take_out(text, target.path)
        continue_yaml.document(after, target.path)
        names = tuple(name for _, name in off)
        return TakenOut(after, names, (edited_note(target, "server", names),))

    def notes(self, target: Target, config: Config, home: Path) -> list[str]:
        """Servers mcpmanager serves that are in block files, which are not edited."""
        notes = []
        for block in continue_yaml.block_files(target.path.parent / "mcpServers"):
            try:
                servers, _ = continue_yaml.read_servers(block.read_text(encoding="utf-8-sig"), block)
            except (OSError, UnicodeDecodeError):
                continue  # a note only: what cannot be read names nothing
            names = [s.name for s in servers if served_by(s, config) is not None]
            if names:
                notes.append(
                    f"{block} also has {', '.join(names)}, served by mcpmanager: mcpmanager does not edit block "
                    "files; remove them there to not load their tools twice"
                )
        return notes

    def as_imported(
        self, text: str | None, target: Target, existing: dict[str, Any], home: Path
    ) -> dict[str, ServerConfig]:
        return dict(reversed(continue_yaml.entries(text or "", target.path)))
