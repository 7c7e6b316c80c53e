"""Advertisement files of running engines, so `mcpmanager status` and `connect` find them.

Each engine writes `<runtime>/engines/<pid>.json` with its endpoint and its servers' states, and
removes it on a clean exit. A file whose pid is gone is stale and is removed when read; a live
engine's file that cannot be read is reported as such (`unreadable`), never skipped.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from mcpmanager.core.system.atomic_write import write_atomic
from mcpmanager.core.system.process_groups import pid_exists

logger = logging.getLogger(__name__)


def engines_dir(runtime_dir: Path) -> Path:
    return runtime_dir / "engines"


def advertisement_path(runtime_dir: Path) -> Path:
    """This process's advertisement file."""
    return engines_dir(runtime_dir) / f"{os.getpid()}.json"


def write_advertisement(runtime_dir: Path, info: dict[str, Any]) -> Path:
    engines_dir(runtime_dir).mkdir(parents=True, exist_ok=True, mode=0o700)
    path = advertisement_path(runtime_dir)
    write_atomic(path, json.dumps(info, indent=1).encode(), 0o600, durable=False)
    return path


def read_advertisements(runtime_dir: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    folder = engines_dir(runtime_dir)
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            pid = int(path.stem)
        except ValueError:
            continue  # not an advertisement
        if not pid_exists(pid):
            path.unlink(missing_ok=True)
            continue
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(info, dict):
                raise ValueError(f"a JSON {type(info).__name__}, not an object")
        except (ValueError, OSError) as exc:
            found.append(unreadable(pid, path, str(exc) or type(exc).__name__))
            continue
        found.append(info)
    return found


def unreadable(pid: int, path: Path, reason: str) -> dict[str, Any]:
    """What stands for a live engine whose advertisement cannot be read: the engine is there (taking
    it for none would hide its held tools and damaged files), its state is not known."""
    effect = (
        "its servers, held tools and endpoint cannot be shown until the engine writes it again (on its next change)"
    )
    return {"pid": pid, "servers": {}, "damaged": [{"file": str(path), "reason": reason, "effect": effect}]}


LAST_CONFIG = "last-config"


def remember_config(runtime_dir: Path, config_file: Path) -> None:
    """The config file this engine runs: an engine `connect` starts later runs the same one (the
    window may have run `--config` another file; the client must not silently lose its tools)."""
    try:
        runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        (runtime_dir / LAST_CONFIG).write_text(str(config_file.resolve()), encoding="utf-8")
    except OSError as exc:  # costs the next started engine the default config, nothing more
        logger.warning("cannot remember the config file: %s", exc)


def last_config(runtime_dir: Path) -> Path | None:
    """The config file the last engine ran, if it still exists."""
    try:
        path = Path((runtime_dir / LAST_CONFIG).read_text(encoding="utf-8").strip())
        return path if path.is_file() else None
    except (OSError, ValueError):  # not UTF-8, a NUL in it: damaged, so as if there were none
        return None
