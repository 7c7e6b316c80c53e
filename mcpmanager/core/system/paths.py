"""Where mcpmanager keeps its files: one config file plus cache, log and runtime directories."""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "mcpmanager"


@dataclass(frozen=True)
class Paths:
    config_file: Path
    cache_dir: Path  # catalogue cache etc.
    log_dir: Path  # per-server stderr logs
    runtime_dir: Path  # advertisement file of the running engine, tokens

    @classmethod
    def resolve(cls, config_file: Path | None = None, env: Mapping[str, str] | None = None) -> Paths:
        """`MCPMANAGER_HOME` (from `env`, default os.environ) puts everything under one directory;
        otherwise platformdirs decides. `config_file` (`--config`) overrides the config file alone."""
        env = os.environ if env is None else env
        if home := env.get("MCPMANAGER_HOME"):
            # Absolute, so an advertised path still means the same file to a process in another cwd.
            root = Path(home).expanduser().absolute()
            paths = cls(root / "config.json", root / "cache", root / "logs", root / "run")
        else:
            cache = Path(platformdirs.user_cache_dir(APP, appauthor=False))
            paths = cls(
                config_file=Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.json",
                cache_dir=cache,
                log_dir=Path(platformdirs.user_log_dir(APP, appauthor=False)),
                runtime_dir=_runtime_dir(cache),
            )
        return paths if config_file is None else dataclasses.replace(paths, config_file=config_file)

    def ensure(self) -> None:
        """Create the cache, log and runtime directories (the runtime one private: it holds tokens)."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.runtime_dir.chmod(0o700)  # mkdir leaves an existing directory's mode alone


def _runtime_dir(cache_dir: Path) -> Path:
    if sys.platform == "win32" or sys.platform == "darwin":
        return Path(platformdirs.user_runtime_dir(APP, appauthor=False))
    # On other Unixes, the XDG runtime dir, or the systemd one when a client was started without
    # XDG_RUNTIME_DIR (so it still finds the engine's advertisement). platformdirs would instead fall
    # back to a shared /tmp/runtime-<uid> with a warning (or raise); our private cache dir is safer.
    for base in (os.environ.get("XDG_RUNTIME_DIR"), f"/run/user/{os.geteuid()}"):
        if base and os.path.isabs(base) and _owned_dir(Path(base)):
            return Path(base) / APP
    return cache_dir / "run"


def _owned_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
