"""What install or undo would do to a client's file: the preview a user reads before anything is written."""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcpmanager.core.clients import yaml_text
from mcpmanager.core.clients.client_file import decode
from mcpmanager.core.clients.json_edit import JsonText
from mcpmanager.core.clients.locations import Layout
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.config.secrets import Masker, config_secrets

InstalledMode = Literal["discovery", "direct", "default"]  # default: no --mode, the engine's


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
    action: Literal["install", "undo", "export", "export-undo"]  # export: `mcpmanager export` (export.py)
    before: bytes | None  # the file now; None: absent
    after: bytes | None  # what it becomes; None: removed (undo of a file install created)
    mode: Mode | None = None  # install: the mode written (None: no --mode, the engine's)
    moved: tuple[str, ...] = ()  # servers turned off (install) or put back (undo)
    served: tuple[str, ...] = ()  # install: served by mcpmanager and still on in the client
    restore: Path | None = None  # undo: the backup whose bytes come back
    exact: bool = True  # undo: False when the file was edited since and only mcpmanager's part went
    notes: tuple[str, ...] = ()
    secrets: tuple[str, ...] = field(default=(), repr=False)  # more values to mask (export: from the keyring)

    @classmethod
    def install(
        cls,
        target: Target,
        before: bytes | None,
        after: str,
        mode: Mode | None,
        served: Sequence[str],
        disable_served: bool,
        notes: Sequence[str] = (),
    ) -> Change:
        """An install's change, whatever the file's format: the servers mcpmanager already serves are
        turned off in the client (`moved`) with --disable-served, else only named (`served`)."""
        served = tuple(served)
        moved, named = (served, ()) if disable_served else ((), served)
        return cls(
            target, "install", before, after.encode("utf-8"), mode=mode, moved=moved, served=named, notes=tuple(notes)
        )

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the file, its servers' secrets masked (`core/config/secrets.py`)."""
        old, new = (decode(data, self.target.path) if data else "" for data in (self.before, self.after))
        where = str(self.target.path)
        lines = difflib.unified_diff(old.splitlines(), new.splitlines(), where, f"{where} ({self.action})", lineterm="")
        mask = Masker(_secrets(old) | _secrets(new) | set(self.secrets))
        return "\n".join(mask(line) for line in lines)


@dataclass(frozen=True)
class TargetState:
    """What the Clients page shows for a file."""

    target: Target
    mode: InstalledMode | None  # None: mcpmanager is not installed there
    served: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()  # servers mcpmanager turned off there
    backups: tuple[Path, ...] = ()
    problem: str | None = None


def _secrets(text: str) -> set[str]:
    """The secrets of every server entry anywhere in the document (its env, headers, args, url)."""
    found: set[str] = set()
    try:
        doc = JsonText(text, "  ").value() if text.strip() else {}
    except json.JSONDecodeError:
        try:
            doc = tomllib.loads(text)  # Codex's config.toml: its `[mcp_servers.NAME]` tables
        except tomllib.TOMLDecodeError:
            try:  # Goose's and Continue's config.yaml
                doc, _ = yaml_text.load(text, Path("config.yaml"))
            except yaml_text.YamlError:
                return found

    def strings(value: Any) -> dict[str, str]:
        return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, Mapping) else {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            args = value.get("args")
            found.update(
                config_secrets(
                    env=strings(value.get("env")),
                    headers=strings(value.get("headers")) | strings(value.get("http_headers")),
                    args=[a for a in args if isinstance(a, str)] if isinstance(args, list) else [],
                )
            )
            for key in ("url", "serverUrl", "httpUrl"):  # Windsurf's and Gemini CLI's remote-URL keys too
                url = value.get(key)
                found.update(config_secrets(url=url) if isinstance(url, str) else ())
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(doc)
    return found
