"""A modern-era server announces a changed tool list only on its listen stream, which opens after
the engine has read the lists: a change made in between must not be lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.subscriptions import ToolsListChanged

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer, tool


class ChangesAtOnce(MemoryServer):
    """Answers its first tools/list with what it had, and adds `late` at that very moment."""

    async def _list(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        listed = await super()._list(ctx, params)
        if "late" not in self.tools:
            self.tools["late"] = tool("late")
            await self.bus.publish(ToolsListChanged())  # no stream is open yet to hear it
        return listed


async def test_a_change_made_before_the_listen_stream_opened_is_caught(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    document = {"mcpServers": {"eager": {"command": "eager-server"}}, "supervisor": {"startTimeout": 5}}
    spawner = FakeSpawner(eager=ChangesAtOnce("eager"))
    engine = Engine(parse_config(json.dumps(document), "test"), paths, spawner=spawner)
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["eager"].status.state is State.READY, 30)
        await wait_for(lambda: "late" in {t.name for t in engine.catalogue.tools()}, 10)
    finally:
        await engine.stop()
