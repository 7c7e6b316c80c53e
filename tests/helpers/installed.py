"""An installed mcpmanager run as a person runs it: the frozen app (tests/packaging/test_app_build.py)
or a wheel in a fresh virtualenv (tests/packaging/test_wheel.py). Little of this machine's
environment; the window offscreen on the bundled demo; a real SDK client over stdio."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmanager.core.engine.advertisement import read_advertisements
from tests.helpers.clients import text_of
from tests.helpers.engines import pid_alive, wait_for

DEMO_WAIT = 60.0  # seconds for the window and both demo servers to be up (a cold start of a fresh install)


def plain_env(home: Path, **extra: str) -> dict[str, str]:
    """Little of this machine: no virtualenv, no PYTHONPATH, as a desktop launcher gives."""
    return {"MCPMANAGER_HOME": str(home), "HOME": str(home), "PATH": "/usr/bin:/bin", **extra}


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def the_window_opens_on_the_demo(command: list[str], home: Path, log: Path) -> None:
    """`command` (the app with no arguments) opens the window offscreen on the bundled demo servers,
    both ready; SIGTERM (Quit) ends it with 0 and the demo servers with it."""
    with log.open("wb") as out:
        window = subprocess.Popen(
            command, env=plain_env(home, QT_QPA_PLATFORM="offscreen"), stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
        try:

            def demo_ready() -> bool:
                for info in read_advertisements(home / "run"):
                    servers = info.get("servers", {})
                    if info.get("front_end") == "gui" and {"notes", "clock"} <= set(servers):
                        return all(s["state"] == "ready" for s in servers.values())
                return False

            deadline = time.monotonic() + DEMO_WAIT
            while not demo_ready() and window.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert demo_ready(), log.read_text(errors="replace")
            [info] = read_advertisements(home / "run")
            assert info["pid"] == window.pid and info["config"] == "bundled demo servers"
            children = [int(s["pid"]) for s in info["servers"].values()]
        finally:
            window.send_signal(signal.SIGTERM)  # Quit
            window.wait(timeout=30)
    assert window.returncode == 0
    assert not any(pid_alive(pid) for pid in children)  # the demo servers stopped with it


async def it_serves_the_demo_over_stdio(params: StdioServerParameters, errlog: Path, title: str) -> None:
    """`serve --stdio --demo --mode direct` answers a real SDK client: the notes server's tools are
    listed, and a note added is then listed."""
    with errlog.open("a") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy", cache=None) as client:
            await wait_for(lambda: has(client, {"add_note", "list_notes"}), timeout=DEMO_WAIT)
            added = await client.call_tool("add_note", {"title": title, "body": "it works"})
            assert not added.is_error, text_of(added)
            assert title in text_of(await client.call_tool("list_notes", {}))


async def has(client: Client, wanted: set[str]) -> bool:
    return wanted <= {tool.name for tool in (await client.list_tools()).tools}
