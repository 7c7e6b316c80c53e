"""The masking rule where a server's words are kept and quoted: its log (ring and file, our own notes
included), its state's reason, and the errors a client or `status` reads."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig, secret_values
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor import explain
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.stderr_log import StderrLog
from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer

SETTINGS = SupervisorSettings(start_timeout=5, backoff_initial=30, starting_wait=2, stop_grace=0.1)
KEY = "sk_live_" + "Z9" * 12
OPAQUE = "opaque-token-no-shape"
PASSWORD = "env-password-value"


def test_the_log_masks_shapes_and_named_values_with_no_literal_known(tmp_path: Path) -> None:
    log = StderrLog(tmp_path / "s.log")
    log.feed(f"starting with {KEY}\nAPI_TOKEN={OPAQUE} LANG=C.UTF-8 PATH=/usr/bin:/bin\n".encode())
    log.note("connecting to https://me:url-password@example.com/mcp?token=abc123&lang=en")
    log.message("info", "auth", f"Authorization: Bearer {OPAQUE}")
    log.close()
    expected = [
        "starting with ***",
        "API_TOKEN=*** LANG=C.UTF-8 PATH=/usr/bin:/bin",
        "[mcpmanager] connecting to https://me:***@example.com/mcp?token=***&lang=en",
        "[log info] auth: Authorization: Bearer ***",
    ]
    assert log.tail(10) == expected
    written = (tmp_path / "s.log").read_text(encoding="utf-8")
    assert [line.split(" ", 1)[1] for line in written.splitlines()] == expected


def test_a_server_s_own_values_are_masked_and_its_harmless_ones_shown() -> None:
    config = StdioServerConfig(
        "stripe",
        "npx",
        ["-y", "@stripe/mcp", "--api-key", OPAQUE, "--port", "8080"],
        env={"ACME_PASSWORD": PASSWORD, "LANG": "C.UTF-8", "DATA_DIR": "/srv/acme"},
    )
    log = StderrLog(None, secrets=secret_values(config))
    log.note(f"started pid 42: npx {' '.join(config.args)}")
    log.feed(f"my key is {OPAQUE}, my password {PASSWORD}\nlocale C.UTF-8 in /srv/acme\n".encode())
    assert log.tail(3) == [
        "[mcpmanager] started pid 42: npx -y @stripe/mcp --api-key *** --port 8080",
        "my key is ***, my password ***",
        "locale C.UTF-8 in /srv/acme",
    ]


def test_a_secret_astride_the_cut_of_a_long_line_is_masked_whole() -> None:
    log = StderrLog(None, secrets=[OPAQUE])
    for start in (8192 - 10, 8192 - len(OPAQUE) - len(KEY) + 3):
        log.feed(b"x" * start + f"{OPAQUE} {KEY} and more".encode() + b"y" * 9000 + b"\n")
        assert log.tail(1) == [("x" * start + "*** *** and more" + "y" * 9000)[:8192] + " …[cut]"]


def test_an_error_quoting_an_exception_masks_it() -> None:
    log = StderrLog(None, secrets=secret_values(HttpServerConfig("r", "https://h/mcp", {"X-Api-Key": OPAQUE})))
    error = ConnectionError(f"cannot reach https://me:pw-in-url@h/mcp?api_key=abc123 with {OPAQUE}")
    reason = explain.explain(error, None, log, was_ready=False)
    assert reason == "ConnectionError: cannot reach https://me:***@h/mcp?api_key=*** with ***"


async def test_the_reason_and_the_unavailable_error_quote_stderr_masked() -> None:
    spawner = FakeSpawner(stripe=MemoryServer("stripe"))
    config = StdioServerConfig("stripe", "stripe-mcp", ["--api-key", KEY], env={"LANG": "C.UTF-8"})
    downstream = Downstream(config, SETTINGS, None, lambda _: None, spawner=spawner)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY)
        spawner.latest("stripe").crash(3, "LANG is C.UTF-8", f"fatal: the key {KEY} was refused")
        await wait_for(lambda: downstream.status.state is State.BACKOFF)
        assert downstream.status.reason == "exited 3 — fatal: the key *** was refused"
        result = await downstream.call_tool("echo", {"text": "x"})
        assert isinstance(result, types.CallToolResult)
        lines = text_of(result).splitlines()
        assert "  LANG is C.UTF-8" in lines and "  fatal: the key *** was refused" in lines
        assert KEY not in text_of(result)
        assert all(KEY not in line.text for line in downstream.log.lines)
    finally:
        await downstream.stop()


async def test_a_servers_protocol_error_is_quoted_masked() -> None:
    """A server refusing a call may quote the key it was given; the error the client gets (a
    JSON-RPC error, as the server sent it: its invalid params) must not."""
    spawner = FakeSpawner(stripe=MemoryServer("stripe"))
    downstream = Downstream(StdioServerConfig("stripe", "stripe-mcp"), SETTINGS, None, lambda _: None, spawner=spawner)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY)
        with pytest.raises(MCPError) as raised:
            await downstream.call_tool("refuse", {"text": f"invalid API key {KEY}"})
        assert raised.value.error.code == types.INVALID_PARAMS
        assert raised.value.error.message == "invalid API key ***"
    finally:
        await downstream.stop()
