"""Finding the user's running engine, or starting one in the background (for `mcpmanager connect`).

A client launches `connect` when it starts; if no engine runs yet, `connect` starts the manager —
the window into the tray when there is a display to show it on, the headless engine otherwise —
detached, so it outlives this client and serves the next ones. Clients launched together (an editor
opening with three windows) share one start: they wait on one lock, and only the first starts it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mcpmanager.core.connect.relay import Endpoint, NoEngine
from mcpmanager.core.engine.advertisement import last_config
from mcpmanager.core.engine.single_instance import engine_running, running_engine, start_lock
from mcpmanager.core.system.display import has_display
from mcpmanager.core.system.own_command import mcpmanager_command
from mcpmanager.core.system.paths import Paths

STARTED_LOG = "engine-started-by-connect.log"
_POLL = 0.05  # seconds between looks for the advertisement (and the lock) while an engine comes up


def background_command(paths: Paths) -> list[str]:
    """The window into the tray when it can be shown, the headless engine otherwise (on the demo
    servers while there is no config yet, as the window does); on the config file the last engine
    ran, when that was another than the default (the window's `--config`)."""
    base = mcpmanager_command()
    last = last_config(paths.runtime_dir)
    config = ["--config", str(last)] if last is not None and last != paths.config_file.resolve() else []
    if has_display() and importlib.util.find_spec("PySide6") is not None:
        return [*base, "--tray", *config]
    demo = [] if config or paths.config_file.exists() else ["--demo"]
    return [*base, "serve", "--http", "--background", *config, *demo]


def start_in_background(paths: Paths, command: list[str] | None = None) -> subprocess.Popen[bytes]:
    """Start the manager detached: its own session, no terminal, output to a log file."""
    paths.ensure()
    log = (paths.log_dir / STARTED_LOG).open("ab")
    options: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": log, "close_fds": True}
    if sys.platform == "win32":
        options["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        options["start_new_session"] = True
    try:
        process = subprocess.Popen(command or background_command(paths), **options)
    finally:
        log.close()
    # Reaped when it exits: a killed engine left a zombie would keep its advertisement alive (its pid
    # exists) for as long as this `connect` runs, and every `connect` would wait on it for ever.
    threading.Thread(target=process.wait, name="reap the engine", daemon=True).start()
    return process


def find_or_start(paths: Paths, budget: float, start: bool = True) -> dict[str, Any]:
    """The running engine's advertisement; starting one (if `start`) and waiting up to `budget`
    seconds for it to serve."""
    info = running_engine(paths.runtime_dir)
    if info is not None:
        return info
    if not start:
        raise NoEngine("no mcpmanager engine is running")
    with start_lock(paths.runtime_dir):
        info = _started(paths, budget)
    if info is None:
        log = paths.log_dir / STARTED_LOG
        raise NoEngine(f"no mcpmanager engine came up within {budget:g} s (its output is in {log})")
    return info


def _started(paths: Paths, budget: float) -> dict[str, Any] | None:
    """The advertisement of the engine that serves within `budget` seconds, started here (once at
    most) whenever no engine holds the engine lock. A holder that has not advertised is starting,
    or stopping: an engine withdraws its advertisement before it exits, and only its exit lets go
    of the lock. So the lock is looked at again while waiting, not only at first: taken for one
    that starts, a stopping engine would be waited on for the whole budget, and `connect` end, its
    client's requests unanswered, when the engine it relays to restarts."""
    deadline = time.monotonic() + budget
    started = False
    while True:
        info = running_engine(paths.runtime_dir)
        if info is not None or time.monotonic() > deadline:
            return info
        if not started and not engine_running(paths.runtime_dir):
            start_in_background(paths)
            started = True  # (from here the lock is its own, held before it advertises)
        time.sleep(_POLL)


def endpoint_of(info: dict[str, Any], mode: str | None) -> Endpoint:
    """Where the engine serves `mode` (None: its default mode): its URL, its token, its socket."""
    urls = info.get("urls") or {}
    url = urls.get(mode) if mode else info.get("endpoint")
    token_file = info.get("token_file")
    if not isinstance(url, str) or not isinstance(token_file, str):
        raise NoEngine(f"the running engine (pid {info.get('pid')}) does not say where it serves")
    try:
        token = Path(token_file).read_text(encoding="ascii").strip()
    except OSError as exc:
        raise NoEngine(f"cannot read the engine's token file {token_file}: {exc.strerror or exc}") from exc
    socket = info.get("socket")
    return Endpoint(url, token, socket if isinstance(socket, str) else None, mode)
