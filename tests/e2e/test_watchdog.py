"""Nothing outlives a killed engine, with no engine started after (`core/system/watchdog.py`).

`kill -9` of `serve --stdio`, of `serve --http` and of the window, each running servers that ignore
the end of their stdin and SIGTERM, each with a grandchild that ignores SIGTERM as well: 2 s later
no process of theirs is left, nor the engine's advertisement, nor the watchdog. An engine that
stops on its own takes its watchdog with it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.e2e.test_faults import end_all, server_processes, stubborn_servers
from tests.helpers.engines import pid_alive, wait_for, watchdogs
from tests.helpers.fixture_servers import FAST, fixture, write_config

HOW = {
    "serve --stdio": ["serve", "--stdio"],
    "serve --http": ["serve", "--http", "--port", "0"],
    "window": [],  # the window and its engine, one process
}


async def engine_process(how: str, config: Path, home: Path) -> asyncio.subprocess.Process:
    command = [sys.executable, "-m", "mcpmanager", *HOW[how], "--config", str(config)]
    env = {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", ""), "QT_QPA_PLATFORM": "offscreen"}
    return await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,  # (held open: a stdio engine ends at its end)
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # as a desktop client starts it: nothing here signals its group
    )


@pytest.mark.parametrize("how", list(HOW))
async def test_nothing_a_killed_engine_ran_outlives_it(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    servers, pidfiles = stubborn_servers(tmp_path, 2)
    config = write_config(tmp_path / "cfg", servers, supervisor=FAST)
    engine = await engine_process(how, config, home)
    pids: list[int] = []
    try:
        pids += await server_processes(home, list(servers), pidfiles)
        [watchdog] = watchdogs(home)
        engine.send_signal(signal.SIGKILL)
        await engine.wait()
        await wait_for(lambda: not any(pid_alive(pid) for pid in pids), 2)
        await wait_for(lambda: not pid_alive(watchdog), 2)
        assert not list((home / "run" / "groups").glob("*.json"))  # the record went with them
        assert not (home / "run" / "engines" / f"{engine.pid}.json").exists()  # and the advertisement
    finally:
        end_all(engine, pids)


async def test_an_engine_that_stops_takes_its_watchdog_with_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    engine = await engine_process("serve --stdio", config, home)
    try:
        await wait_for(lambda: bool(watchdogs(home)), 20)
        [watchdog] = watchdogs(home)
        assert engine.stdin is not None
        engine.stdin.close()  # a stdio engine's normal end
        assert await asyncio.wait_for(engine.wait(), 20) == 0
        await wait_for(lambda: not pid_alive(watchdog), 2)
    finally:
        if engine.returncode is None:
            engine.kill()
