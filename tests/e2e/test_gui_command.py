"""The README's run command, as a user runs it: `mcpmanager` with no config opens the window on the
bundled demo servers, serves clients, and SIGTERM stops every server; with no display it says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.helpers.engines import pid_alive


def status(home: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "status", "--json"],
        env={**os.environ, "MCPMANAGER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(done.stdout)["engines"] if done.stdout else []


def poll(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s")
        time.sleep(0.5)


def test_the_run_command_shows_the_demo_and_stops_it_all(home: Path) -> None:
    env = {**os.environ, "MCPMANAGER_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    errors = (home / "app-stderr.log").open("w")  # a file, not a pipe nobody reads (the app logs a lot)
    app = subprocess.Popen([sys.executable, "-m", "mcpmanager"], env=env, stderr=errors, stdout=subprocess.DEVNULL)
    try:

        def demo_ready() -> bool:
            engines = status(home)
            servers = engines[0]["servers"] if engines else {}
            return (
                isinstance(servers, dict)
                and set(servers) == {"notes", "clock"}
                and all(s["state"] == "ready" for s in servers.values())
            )

        poll(demo_ready, timeout=60)
        engine = status(home)[0]
        assert engine["config"] == "bundled demo servers"
        assert str(engine["endpoint"]).startswith("http://127.0.0.1:")
        servers = engine["servers"]
        assert isinstance(servers, dict)
        pids = [s["pid"] for s in servers.values()]
        assert all(isinstance(p, int) and pid_alive(p) for p in pids)
        assert not (home / "config.json").exists()  # nothing saved until the user chooses
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=30) == 0
        assert not any(pid_alive(p) for p in pids)
        assert status(home) == []  # the advertisement is gone with it
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        errors.close()


def test_no_display_is_said_in_one_line(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run(
        [sys.executable, "-m", "mcpmanager"],
        env={**env, "MCPMANAGER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "mcpmanager: no display to show the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
        "`mcpmanager serve --http` runs the engine without it"
    )
