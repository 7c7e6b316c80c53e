"""One engine per user, with real processes: `serve --http` refuses beside a running engine, the
window takes over an engine `connect` started in the background (its client carries on), a second
window brings the first forward, and `status` names what runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from tests.helpers.clients import bridge_env, connected, text_of
from tests.helpers.engines import engines, pid_alive, wait_for


def mcpmanager(home: Path, *args: str, gui: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpmanager", *args],
        env=gui_env(home) if gui else bridge_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )


def gui_env(home: Path) -> dict[str, str]:
    return {**bridge_env(home), "QT_QPA_PLATFORM": "offscreen"}


@contextmanager
def process(home: Path, *args: str, gui: bool = False) -> Iterator[subprocess.Popen[bytes]]:
    """`mcpmanager ARGS` running; stopped (SIGTERM, as a logout does) at the end."""
    log = (home / f"{'gui' if gui else 'serve'}-{len(list(home.glob('*.out')))}.out").open("wb")
    child = subprocess.Popen(
        [sys.executable, "-m", "mcpmanager", *args],
        env=gui_env(home) if gui else bridge_env(home),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    try:
        yield child
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
            log.close()


def advertised(home: Path, front_end: str) -> bool:
    return [info.get("front_end") for info in engines(home) if info.get("endpoint")] == [front_end]


def status_json(home: Path) -> list[dict[str, object]]:
    done = mcpmanager(home, "status", "--json")
    assert done.returncode == 0, done.stderr
    found: list[dict[str, object]] = json.loads(done.stdout)["engines"]
    return found


async def test_serve_http_beside_a_running_engine_refuses_with_a_clear_message(user: Path) -> None:
    with process(user, "serve", "--http", "--port", "0") as first:
        await wait_for(lambda: advertised(user, "serve"), timeout=30)
        [running] = status_json(user)
        assert running["pid"] == first.pid
        second = mcpmanager(user, "serve", "--http", "--port", "0")
        assert second.returncode == 2
        assert second.stdout == ""
        assert second.stderr == (
            f"mcpmanager: mcpmanager is already running (`mcpmanager serve --http`, pid {first.pid}) at "
            f"{running['endpoint']}; stop it first, or let clients use it (`mcpmanager connect`)\n"
        )
        # A window beside it refuses too, saying what runs instead (it is not a background engine).
        window = mcpmanager(user, gui=True)
        assert window.returncode == 2
        assert f"(`mcpmanager serve --http`, pid {first.pid})" in window.stderr
        assert "stop it first to open the window" in window.stderr
        assert first.poll() is None  # and the running one is undisturbed
    assert first.returncode == 0


async def test_the_window_takes_over_a_background_engine_and_comes_forward_for_a_second_one(user: Path) -> None:
    async with connected(user, "legacy", mode="direct") as client:
        await wait_for(lambda: advertised(user, "background"), timeout=30)
        [background] = engines(user)
        assert text_of(await client.call_tool("b__echo", {"text": "before"})) == "before"

        with process(user, gui=True) as window:
            # The background engine stops for the window, which serves instead.
            await wait_for(lambda: advertised(user, "gui"), timeout=60)
            await wait_for(lambda: not pid_alive(int(background["pid"])), timeout=30)
            [gui] = engines(user)
            assert gui["pid"] == window.pid
            # The client that was connected carries on through the window's engine.
            assert text_of(await client.call_tool("b__echo", {"text": "after"})) == "after"

            # A second `mcpmanager` brings this window forward and exits.
            second = mcpmanager(user, gui=True)
            assert second.returncode == 0, second.stderr
            assert f"(the window, pid {window.pid})" in second.stderr
            assert "its window was brought forward" in second.stderr
            log = user / "logs" / "mcpmanager.log"
            await wait_for(lambda: "this window comes forward instead" in log.read_text(), timeout=10)

            # `serve --http` refuses beside the window, naming it.
            refused = mcpmanager(user, "serve", "--http", "--port", "0")
            assert refused.returncode == 2
            assert f"already running (the window, pid {window.pid})" in refused.stderr
        assert window.returncode == 0
        # Quit means quit: the idle client does not bring another engine up by itself...
        await anyio.sleep(2)
        assert engines(user) == []
        # ... only its next request does, and is answered.
        assert text_of(await client.call_tool("b__echo", {"text": "later"})) == "later"
        assert advertised(user, "background")
