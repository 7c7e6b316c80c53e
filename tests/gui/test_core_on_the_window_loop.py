"""The core on the window's loop (qasync turns every sleep into a Qt timer): the HTTP endpoint
answers clients, and a remote (HTTP) server comes up, stays up and carries calls. An infinite sleep
once broke both there and nowhere else (`anyio.sleep_forever` is banned in pyproject for it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from mcpmanager.core.serve.http import serve_http
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.tasks import spawn
from tests.helpers.fixture_servers import fixture
from tests.helpers.gui import gui_context, until


async def test_a_remote_server_through_an_endpoint_on_the_qt_loop(tmp_path: Path) -> None:
    async with gui_context(tmp_path / "a", {"local": fixture("--name", "local")}) as served:
        urls: list[str] = []
        serving = spawn(serve_http(served.engine.router, 0, urls.append, token="t0ken"), name="test http")
        try:
            await until(lambda: bool(urls))
            remote = {"remote": {"type": "http", "url": urls[0], "headers": {"Authorization": "Bearer t0ken"}}}
            async with gui_context(tmp_path / "b", remote, mode="direct") as ctx:
                downstream = ctx.engine.downstreams["remote"]
                await until(lambda: downstream.status.state is State.READY, timeout=30)
                await asyncio.sleep(1.0)  # it must stay up, not crash right after the handshake
                assert downstream.status.state is State.READY and downstream.status.restarts == 0
                async with Client(ctx.engine.router.server, mode="legacy", cache=None) as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    assert "discover_tools" in tools  # what server A shows its clients (discovery mode)
                    result = await client.call_tool("call_tool", {"tool_name": "echo", "arguments": {"text": "hi"}})
                    assert not result.is_error and result.structured_content == {"text": "hi"}
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
