"""A server built before the 2026-07-28 era (the published mcp-server-sqlite, which needs mcp<2) is
probed once: its era is remembered, and later starts use the handshake alone, so its pane shows what
the server says rather than a screenful of errors about a probe it does not know."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from tests.helpers.clients import http_client
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.published import PUBLISHED, Config
from tests.helpers.serving import serving_http

SQLITE = PUBLISHED / "venvs" / "mcp-server-sqlite" / "bin" / "mcp-server-sqlite"
PROBE_ERROR = "Failed to validate request"


async def tools_once_ready(client: Client) -> list[str]:
    tools: list[str] = []

    async def listed() -> bool:
        tools[:] = sorted(t.name for t in (await client.list_tools()).tools)
        return "read_query" in tools

    await wait_for(listed, timeout=60, interval=0.2)
    return tools


async def test_an_old_server_is_probed_once_then_started_quietly(published: Config, tmp_path: Path) -> None:
    assert SQLITE.exists(), "scripts/install-published-servers.sh installs mcp-server-sqlite"
    entry = {"command": str(SQLITE), "args": ["--db-path", str(tmp_path / "test.db")]}
    config = write_config(tmp_path / "cfg", {"sqlite": entry}, supervisor=FAST)
    home = tmp_path / "home"
    log = home / "logs" / "sqlite.log"
    runs: list[tuple[str, list[str]]] = []
    for _ in range(3):
        before = len(log.read_text().splitlines()) if log.exists() else 0
        async with serving_http(config, home) as served, http_client(served.url, served.token) as client:
            tools = await tools_once_ready(client)
        runs.append((served.errlog.read_text(), log.read_text().splitlines()[before:]))
        assert "read_query" in tools and len(tools) == 6, tools

    first, second, third = (lines for _, lines in runs)
    # The first start probes: the old server complains (how loudly is its business, but it does).
    assert any(PROBE_ERROR in line for line in first), first
    # Later starts do not probe: not one complaint, and the server is ready with its tools.
    assert not any(PROBE_ERROR in line for line in second + third), second + third
    assert len(second) <= 3 and len(third) <= 3, (second, third)
