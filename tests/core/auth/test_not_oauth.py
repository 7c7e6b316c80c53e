"""A remote server that refuses mcpmanager with a 401 but has no OAuth behind it (it wants a static
API key) is a failure to fix, not a sign-in: it backs off with the reason, as before OAuth. With
the key as a fixed Authorization header, OAuth stays out of the way."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import anyio
import pytest

from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from tests.helpers.engines import wait_for
from tests.helpers.oauth_server import free_port

SETTINGS = SupervisorSettings(start_timeout=10, backoff_initial=5, starting_wait=1, stop_grace=0.5)


def _spawn(port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.helpers.conformance_server", "--http", str(port), "--bearer", "k3y"]
    return subprocess.Popen(command, stderr=subprocess.PIPE)


@pytest.fixture
async def keyed() -> AsyncIterator[str]:
    """The conformance server over HTTP, answering 401 to any request without `Bearer k3y`."""
    port = free_port()
    process = _spawn(port)
    try:
        assert process.stderr is not None
        while b"ready" not in (line := await anyio.to_thread.run_sync(process.stderr.readline)):
            assert line, "the server did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


async def test_a_401_without_oauth_is_a_failure_not_a_sign_in(keyed: str) -> None:
    downstream = Downstream(HttpServerConfig("keyed", keyed), SETTINGS, None, lambda _event: None)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.BACKOFF, timeout=20)
        assert "offers no OAuth sign-in" in downstream.status.reason
    finally:
        await downstream.stop()


async def test_a_fixed_authorization_header_is_sent_as_it_is(keyed: str) -> None:
    config = HttpServerConfig("keyed", keyed, headers={"Authorization": "Bearer k3y"})
    downstream = Downstream(config, SETTINGS, None, lambda _event: None)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY, timeout=20)
    finally:
        await downstream.stop()
