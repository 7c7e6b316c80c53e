"""Saving the config: atomic, one backup, lossless (see `document`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from mcpmanager.core.config.model import Config
from mcpmanager.core.system.atomic_write import write_atomic


def save_config(config: Config, path: Path) -> None:
    """Write `config` atomically, keeping the previous file as `<name>.bak`.

    A new file is private (it holds tokens); an existing one keeps its mode. Saving what is already
    on disk touches nothing.
    """
    path = Path(os.path.realpath(path))  # through a symlink (dotfiles), replace the target, not the link
    data = (json.dumps(config.to_document(), indent=2, ensure_ascii=False) + "\n").encode()
    try:
        previous: bytes | None = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        previous, mode = None, 0o600
    if previous == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if previous is not None:
        write_atomic(backup_of(path), previous, mode)
    write_atomic(path, data, mode)


def backup_of(path: Path) -> Path:
    """The one backup `save_config` keeps of the file at `path`."""
    path = Path(os.path.realpath(path))
    return path.with_name(path.name + ".bak")
