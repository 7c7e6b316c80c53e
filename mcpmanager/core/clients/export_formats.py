"""Each format's edits for `mcpmanager export`, by the client's layout: JSON (`export_text`),
Codex's TOML (`export_text`), Goose's and Continue's YAML (`export_yaml`). One place that knows
which module edits which file, for the export and its undo."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from mcpmanager.core.clients import codex_toml, continue_yaml, goose
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.export_text import (
    current_entries,
    json_entry_text,
    json_with,
    json_without,
    toml_table_text,
    toml_with,
    toml_without,
)
from mcpmanager.core.clients.export_yaml import YAML_LAYOUTS, yaml_entries, yaml_entry_text, yaml_with, yaml_without
from mcpmanager.core.clients.importing import read_entries
from mcpmanager.core.config.servers import ServerConfig


def current(text: str | None, target: Target) -> dict[str, Any]:
    """The client's entries by name, as the file holds them now (InstallError if it does not read)."""
    if target.layout in YAML_LAYOUTS:
        return yaml_entries(text, target.layout, target.path)
    return current_entries(text, target.layout, target.path)


def as_imported(text: str | None, target: Target, existing: dict[str, Any], home: Path) -> dict[str, ServerConfig]:
    """The client's entries read as import reads them, to tell the same server under the same name."""
    if target.layout == "codex":
        return codex_toml.entries(text or "", target.path)
    if target.layout == "goose":
        return {name: server for name, (server, _) in goose.entries(text or "", target.path).items()}
    if target.layout == "continue":
        return dict(reversed(continue_yaml.entries(text or "", target.path)))
    return read_entries(existing, home, target.layout)


def with_entries(text: str | None, target: Target, entries: Mapping[str, Any], replace: Collection[str]) -> str:
    """`text` with the entries written (those in `replace` over the client's own)."""
    if target.layout == "codex":
        return toml_with(text, target.path, entries, replace)
    if target.layout in YAML_LAYOUTS:
        return yaml_with(text, target.layout, target.path, entries, replace)
    return json_with(text, target.layout, target.path, entries)


def entry_text(text: str, target: Target, name: str) -> str | None:
    """Entry `name` as written (to replace it, or put it back), None if it cannot be cut out as text."""
    if target.layout == "codex":
        return toml_table_text(text, name)
    if target.layout in YAML_LAYOUTS:
        return yaml_entry_text(text, target.layout, target.path, name)
    return json_entry_text(text, target.layout, target.path, name)


def without(
    text: str, target: Target, names: Collection[str], put_back: Mapping[str, str], previous: Mapping[str, Any]
) -> str:
    """`text` without the entries `names`; those in `put_back` get that text back (`previous`: their
    values, to check the result: anything else changed, and InstallError)."""
    if target.layout == "codex":
        return toml_without(text, target.path, names, put_back, previous)
    if target.layout in YAML_LAYOUTS:
        return yaml_without(text, target.layout, target.path, names, put_back, previous)
    return json_without(text, target.layout, target.path, names, put_back, previous)
