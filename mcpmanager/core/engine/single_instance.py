"""One engine per user: the engine that serves HTTP holds an exclusive lock for its lifetime.

The lock is a file in the runtime directory locked with `flock`: the kernel drops it when the
process dies however it dies, so a crash never leaves a stale claim (the advertisement file may
linger; `read_advertisements` already skips engines whose pid is gone). A second `mcpmanager`
finds the running one through its advertisement: the window asks it to come forward, `serve --http`
refuses with a clear message, `connect` uses it.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from mcpmanager.core.engine.advertisement import read_advertisements
from mcpmanager.core.system.file_lock import FileLock

LOCK_FILE = "engine.lock"
START_LOCK_FILE = "start.lock"


def engine_lock(runtime_dir: Path) -> FileLock:
    """Held by the engine that serves HTTP (the window's or `serve --http`)."""
    return FileLock(runtime_dir, LOCK_FILE)


def start_lock(runtime_dir: Path) -> FileLock:
    """Held while `connect` starts an engine, so clients launched together start only one."""
    return FileLock(runtime_dir, START_LOCK_FILE)


def running_engine(runtime_dir: Path) -> dict[str, Any] | None:
    """The advertisement of the live engine that serves HTTP (URLs and token file), if any."""
    for info in read_advertisements(runtime_dir):
        if info.get("token_file") and str(info.get("endpoint", "")).startswith("http://"):
            return info
    return None


def engine_running(runtime_dir: Path) -> bool:
    """Whether some process holds the engine lock (it may not have advertised yet)."""
    probe = engine_lock(runtime_dir)
    if probe.acquire():
        probe.release()
        return False
    return True


def wait_for_advertisement(runtime_dir: Path, timeout: float) -> dict[str, Any] | None:
    """The running engine's advertisement, waiting a little for one that holds the lock but has
    not advertised yet (it is still starting)."""
    deadline = time.monotonic() + timeout
    while True:
        info = running_engine(runtime_dir)
        if info is not None or time.monotonic() > deadline:
            return info
        time.sleep(0.05)


def control(info: dict[str, Any], action: str) -> bool:
    """Ask the running engine's front end to do something (`show`: the window comes forward; `quit`:
    a background engine stops); False if it did not answer."""
    token_file = info.get("token_file")
    endpoint = str(info.get("endpoint", ""))
    if not token_file or not endpoint.endswith("/mcp"):
        return False
    try:
        token = Path(token_file).read_text(encoding="ascii").strip()
        request = urllib.request.Request(
            endpoint[: -len("/mcp")] + f"/control/{action}", method="POST", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as answer:
            return bool(answer.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def describe(info: dict[str, Any] | None) -> str:
    """What runs, for a refusal message (None: the lock is held but nothing advertised yet)."""
    if info is None:
        return "another mcpmanager engine is starting"
    kind = {"gui": "the window", "background": "in the background, for a client"}.get(
        str(info.get("front_end")), "`mcpmanager serve --http`"
    )
    return f"mcpmanager is already running ({kind}, pid {info.get('pid')}) at {info.get('endpoint')}"
