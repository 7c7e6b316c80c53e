"""Launch anywhere: a server's bare command found the way the user's shell would, with the PATH a GUI
gets from launchd or a .desktop file (no ~/.local/bin, no nvm), and mcpmanager's own command line."""

from __future__ import annotations

import logging
import shlex
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.own_command import mcpmanager_command
from tests.helpers.clients import text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FIXTURE_SERVER

GUI_PATH = "/usr/bin:/bin"  # roughly what a desktop-started app inherits
SETTINGS = SupervisorSettings(start_timeout=20, backoff_initial=0.2, backoff_max=1, stop_grace=1)


@asynccontextmanager
async def started(command: str, *args: str) -> AsyncIterator[Downstream]:
    downstream = Downstream(StdioServerConfig("srv", command, list(args)), SETTINGS, None, lambda _event: None)
    downstream.start()
    try:
        yield downstream
    finally:
        await downstream.stop()


@pytest.fixture
def gui_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home, and our environment as a GUI has it: HOME there, a PATH without it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", GUI_PATH)
    return home


async def test_a_bare_name_in_local_bin_starts_and_its_child_gets_that_path(
    gui_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    local_bin = gui_home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    wrapper = local_bin / "fixture-mcp"  # as uv or pipx would install a server
    wrapper.write_text(
        "#!/bin/sh\n"
        'printf %s "$PATH" > "$HOME/child-path"\n'
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FIXTURE_SERVER))} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    caplog.set_level(logging.INFO, logger="mcpmanager.core.system.command_path")
    async with started("fixture-mcp", "--name", "wrapped") as downstream:
        await wait_for(lambda: downstream.status.state is State.READY, timeout=30)
        result = await downstream.call_tool("whoami", {})
        assert isinstance(result, types.CallToolResult)
        name, pid = text_of(result).split()
        assert name == "wrapped" and pid_alive(int(pid))
        # The inherited PATH first, then the extra folder: so the server's own `node`/`uvx` resolve too.
        child_path = (gui_home / "child-path").read_text(encoding="utf-8").split(":")
        assert child_path[:2] == ["/usr/bin", "/bin"] and str(local_bin) in child_path
    assert f"fixture-mcp is not on the inherited PATH; using {wrapper}" in caplog.text


async def test_a_bare_name_found_nowhere_fails_at_once_for_good(gui_home: Path) -> None:
    begun = time.monotonic()
    async with started("definitely-not-a-command-mcpm-launch") as downstream:
        await wait_for(lambda: downstream.status.state is State.FAILED, timeout=10)
        assert downstream.status.reason == "command not found: definitely-not-a-command-mcpm-launch"
        assert downstream.status.restarts == 0
    assert time.monotonic() - begun < 5  # no backoff, no retries: permanent


def test_mcpmanager_command_starts_mcpmanager_without_any_path(tmp_path: Path) -> None:
    command = mcpmanager_command()
    # A client starts it with no PATH of ours and from anywhere: the command must stand on its own.
    done = subprocess.run(
        [*command, "--help"], env={}, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "usage: mcpmanager" in done.stdout
