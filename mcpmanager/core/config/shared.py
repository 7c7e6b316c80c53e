"""The config file shared by several writers: the lock that our writers take in turn, and the file
as it was read, which the save checks it is still (`save_config(read=…)`).

Every writer of ours (the window, the engine, `import`, `secrets move`) holds `ConfigLock` from its
read of the file to its save, so no two of them edit the same copy. The lock is a file beside the
config (`.config.json.lock`, next to the real file when the config is a symlink); the kernel drops
it with its process, however the process ends, so a crash leaves no stale claim. Editors we do not
control take no lock: the save's check catches what they saved after our read (we read again and
make the change again), except a save that lands between that check and our rename.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from mcpmanager.core.config.load import config_from_bytes
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.system.file_lock import FileLock

LOCK_TIMEOUT = 10.0  # s: our writers hold the lock for one read and one save, milliseconds each
_POLL = 0.01


class ConfigBusy(Exception):
    """Another program kept the config's lock for longer than the wait allowed."""


@dataclass(frozen=True)
class Snapshot:
    """The config file as read: its bytes (None: there is no file) and what they say."""

    data: bytes | None
    config: Config | None


def read_snapshot(path: Path) -> Snapshot:
    """Read the file once, for a change and for the save's check (ConfigError when it does not load)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Snapshot(None, None)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return Snapshot(data, config_from_bytes(data, str(path)))


def lock_file_of(path: Path) -> Path:
    real = Path(os.path.realpath(path))
    return real.with_name(f".{real.name}.lock")


class ConfigLock:
    """The lock our writers of the config at `path` take in turn: `with` (blocking the thread) or
    `async with` (the loop runs meanwhile); `ConfigBusy` after `timeout` seconds."""

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT) -> None:
        where = lock_file_of(path)
        self.path = where
        self.timeout = timeout
        self._lock = FileLock(where.parent, where.name)

    def _busy(self) -> ConfigBusy:
        return ConfigBusy(f"another program has held {self.path} for over {self.timeout:g} s; nothing was saved")

    def __enter__(self) -> ConfigLock:
        deadline = time.monotonic() + self.timeout
        while not self._lock.acquire():
            if time.monotonic() > deadline:
                raise self._busy()
            time.sleep(_POLL)
        return self

    async def __aenter__(self) -> ConfigLock:
        deadline = time.monotonic() + self.timeout
        while not self._lock.acquire():  # never blocks; in a thread, a cancel could strand it held
            if time.monotonic() > deadline:
                raise self._busy()
            await asyncio.sleep(_POLL)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._lock.release()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._lock.release()
