"""Saving the config: atomic, one backup, lossless (see `document`), and, for a change made to the
file as it was read, never over a file another program saved meanwhile (`ConfigChanged`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import EllipsisType

from mcpmanager.core.config.model import Config
from mcpmanager.core.system.atomic_write import write_atomic


class ConfigChanged(Exception):
    """The config file is no longer what the change was made to: another program saved it."""


def save_config(config: Config, path: Path, *, read: bytes | EllipsisType | None = ...) -> None:
    """Write `config` atomically, keeping the previous file as `<name>.bak`.

    A new file is private (it holds tokens); an existing one keeps its mode. Saving what is already
    on disk touches nothing. `read`: the bytes `config` was made from (None: there was no file);
    when the file is not those bytes, before the backup or at the last moment before the rename,
    `ConfigChanged` and the file is left as it is.
    """
    path = Path(os.path.realpath(path))  # through a symlink (dotfiles), replace the target, not the link
    data = (json.dumps(config.to_document(), indent=2, ensure_ascii=False) + "\n").encode()
    previous, mode = _read(path)
    if read is not ... and previous != read:
        raise ConfigChanged(str(path))
    if previous == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if previous is not None:
        write_atomic(backup_of(path), previous, mode)

    def unchanged() -> None:
        if read is not ... and _read(path)[0] != previous:
            raise ConfigChanged(str(path))

    write_atomic(path, data, mode, before_replace=unchanged)


def _read(path: Path) -> tuple[bytes | None, int]:
    """The file's bytes (None: no file) and its permission bits (0o600 for a new one)."""
    try:
        return path.read_bytes(), stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None, 0o600


def backup_of(path: Path) -> Path:
    """The one backup `save_config` keeps of the file at `path`."""
    path = Path(os.path.realpath(path))
    return path.with_name(path.name + ".bak")
