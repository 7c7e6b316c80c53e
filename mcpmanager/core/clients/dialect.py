"""What import, install, its undo and export ask of a client's file layout: a `Dialect`, text in
and text out.

One dialect per layout of file (`dialects.DIALECTS`): Claude-style `mcpServers` JSON
(`json_servers`), JSON with a per-server switch (`json_switched`: Zed, Cline, OpenCode), Codex's
TOML (`codex`), Goose's and Continue's YAML (`yaml_dialects`). Below them the format readers and
editors (`json_reading`, `json_edit`, `codex_toml`, `yaml_text`, `export_yaml`); above them reading
(`reading`), install and undo (`install`) and export (`export`, `export_undo`), written once against
this protocol.

A server in a file is a `Spot`: the servers object it is in (Claude Code has one per project) and
its name there. Every text a dialect returns is checked by it, by parsing it again, before anything
is written: an edit that would change anything else raises InstallError, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mcpmanager.core.clients.change import Target
from mcpmanager.core.config.json_text import KeyPath
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig

Spot = tuple[KeyPath, str]  # a server in a file: its servers object, and its name there
PutBack = tuple[str, Any]  # an entry export's undo puts back: its text as it was, and its value (to check)


@dataclass(frozen=True)
class TakenOut:
    """Undo after the file was edited since install: the file without mcpmanager's part, the servers
    it turned on again (as the notes name them), and what the notes say."""

    text: str
    moved: tuple[str, ...]
    notes: tuple[str, ...]


class Dialect(Protocol):
    """A layout of client file, as install, undo and export use it."""

    # Import -------------------------------------------------------------------------------------

    def read(self, text: str, path: Path, home: Path) -> tuple[list[ServerConfig], list[str]]:
        """The servers of the file's text and the problems, one line each naming `path` and the place."""
        ...

    # Install and undo --------------------------------------------------------------------------

    def check(self, text: str | None, target: Target) -> None:
        """InstallError (naming the place) when the file does not read as this layout."""

    def guard(self, target: Target, exists: bool) -> None:
        """InstallError when writing the file would harm the client (Continue: config.json)."""
        return None

    def bridge(self, entry: dict[str, Any]) -> dict[str, Any]:
        """mcpmanager's entry (`command`, `args`) in the layout's own shape."""
        ...

    def kept_loaded(self) -> dict[str, Any]:
        """Members of mcpmanager's entry that keep its tools loaded in a client with a tool search of its
        own (Claude Code's `alwaysLoad`, Copilot CLI's `deferTools`); install adds them to an entry in
        discovery mode, whose few tools are the way to every other."""
        return {}

    def shape(self, text: str | None, entry: dict[str, Any]) -> dict[str, Any]:
        """An entry export writes, in the form this file has (OpenCode: its off switch)."""
        return entry

    def bridge_of(self, text: str | None, target: Target) -> Any:
        """mcpmanager's entry in the file, or None."""

    def served(self, text: str | None, target: Target, config: Config, home: Path) -> list[Spot]:
        """The servers of the file that mcpmanager serves and the client starts."""
        ...

    def label(self, spot: Spot) -> str:
        """A server as a note names it."""
        return spot[1]

    def installed(self, text: str | None, target: Target, entry: dict[str, Any], disable: Sequence[Spot]) -> str:
        """`text` with mcpmanager's entry and the `disable` servers turned off. Deterministic: undo
        redoes it on the backup to tell whether the file was edited since."""
        ...

    def off_wording(self, text: str) -> str:
        """How install turns a server off in this file (`text`, as it wrote it), for people."""
        ...

    def turned_off(self, text: str, target: Target, backup: bytes | None) -> list[Spot]:
        """The servers install turned off, as the file shows them (with the newest backup, the file
        before the install, for layouts that mark nothing)."""
        ...

    def take_out(self, text: str, target: Target, off: Sequence[Spot], backup: bytes | None) -> TakenOut:
        """The file edited since install: without mcpmanager's entry, the `off` servers on again."""
        ...

    def notes(self, target: Target, config: Config, home: Path) -> list[str]:
        """What install says beside the change (servers in files it does not edit)."""
        return []

    # Export --------------------------------------------------------------------------------------

    def entries(self, text: str | None, target: Target) -> dict[str, Any]:
        """The client's entries by name, as the file holds them (InstallError if it does not read)."""
        ...

    def as_imported(
        self, text: str | None, target: Target, existing: dict[str, Any], home: Path
    ) -> dict[str, ServerConfig]:
        """The client's entries read as import reads them."""
        ...

    def with_entries(
        self, text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]
    ) -> str:
        """`text` with the entries written (those in `replace` over the client's own)."""
        ...

    def entry_text(self, text: str, target: Target, name: str) -> str | None:
        """Entry `name` as written, None if it cannot be cut out as text."""

    def without(self, text: str, target: Target, names: Collection[str], put_back: Mapping[str, PutBack]) -> str:
        """`text` without the entries `names`; those in `put_back` get their text back (their value
        checks the result)."""
        ...


def edited_note(target: Target, what: str, turned_on: Sequence[str]) -> str:
    """The first note of an undo after the file was edited since install."""
    again = f" and the servers it turned off turned on again ({', '.join(turned_on)})" if turned_on else ""
    return (
        f"{target.path} was edited since mcpmanager was installed: your edits are kept, only mcpmanager's {what} "
        f"removed{again}"
    )
