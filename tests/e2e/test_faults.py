"""Faults a user or the world causes, one test each, with real subprocess servers (issue 15's list):
each failed before its fix."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcpmanager.core.config.load import load_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture


async def test_a_config_file_that_vanishes_for_a_moment_stops_nothing(tmp_path: Path) -> None:
    """Editors that save by delete-and-create, and sync tools, remove the file for a moment."""
    home = tmp_path / "home"
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    paths.ensure()
    servers = {"a": fixture("--name", "a"), "b": fixture("--name", "b")}
    document = {"mcpServers": servers, "supervisor": FAST}
    paths.config_file.write_text(json.dumps(document), encoding="utf-8")
    engine = Engine(load_config(paths.config_file), paths, "direct")
    await engine.start()
    watching = spawn(engine.watch_config(interval=0.05), name="test watch")
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), 30)
        pids = {name: d.process.pid for name, d in engine.downstreams.items() if d.process}

        paths.config_file.unlink()
        await asyncio.sleep(0.5)  # ten polls with the file gone
        assert set(engine.downstreams) == {"a", "b"}
        assert all(d.status.state is State.READY for d in engine.downstreams.values())
        assert {name: d.process.pid for name, d in engine.downstreams.items() if d.process} == pids
        assert {t.server for t in engine.catalogue.tools()} == {"a", "b"}

        # Back, with a change: applied as any change is.
        servers["c"] = fixture("--name", "c")
        paths.config_file.write_text(json.dumps(document), encoding="utf-8")
        await wait_for(lambda: "c" in engine.downstreams, 10)
        assert engine.downstreams["a"].process is not None and engine.downstreams["a"].process.pid == pids["a"]
    finally:
        watching.cancel()
        await engine.stop()
