"""Learning from use in the engine: a discover-then-call through the router is learned, kept in the
cache folder across a restart, and a tool called often is suggested always-on in what `status`
reads (the advertisement)."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client

from mcpmanager.core.engine.engine import LEARNED_FILE, Engine
from mcpmanager.core.system.paths import Paths
from tests.core.engine.test_engine import config, until_ready
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner


def advertised(paths: Paths) -> dict[str, object]:
    return json.loads(next((paths.runtime_dir / "engines").glob("*.json")).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


async def test_what_is_called_after_discovery_is_learned_kept_and_suggested(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    engine = Engine(config(notes="notes-server"), paths, mode="discovery", spawner=FakeSpawner())
    await engine.start()
    try:
        await until_ready(engine)
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            for query in ("repeat my words back", "say the text again", "echo this text"):
                found = await client.call_tool("discover_tools", {"query": query, "limit": 25})
                assert "echo" in [t["name"] for t in (found.structured_content or {})["tools"]]
                called = await client.call_tool("call_tool", {"tool_name": "echo", "arguments": {"text": "x"}})
                assert not called.is_error
        assert engine.describe()["learned"] == 3
        (suggested,) = engine.describe()["suggested_always_on"]
        assert (suggested["server"], suggested["tool"], suggested["calls"]) == ("notes", "echo", 3)
        assert suggested["tokens"] > 0
        await wait_for(lambda: advertised(paths)["suggested_always_on"] == [suggested], 5)
    finally:
        await engine.stop()

    assert (paths.cache_dir / LEARNED_FILE).exists()
    again = Engine(config(notes="notes-server"), paths, mode="discovery", spawner=FakeSpawner())
    await again.start()
    try:
        assert len(again.router.learning.store) == 3  # read back at start
    finally:
        await again.stop()
