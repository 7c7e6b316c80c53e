"""Changes made through `Control` (what the window does) on a running engine with real servers: the
file is changed as it is on disk now and saved, the engine applies it, a connected client sees it,
and a change that cannot be made says why and leaves the file alone."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.engine.control import Control, ControlError
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.events import ConfigApplied
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config


@pytest.fixture
async def running(tmp_path: Path, home: Path) -> AsyncIterator[tuple[Engine, Control, Path]]:
    path = write_config(
        tmp_path, {"alpha": fixture("--name", "alpha"), "beta": fixture("--name", "beta")}, supervisor=FAST
    )
    paths = Paths.resolve(config_file=path, env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(load_config(path), paths, "discovery")
    await engine.start()
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), timeout=30)
        yield engine, Control(engine.paths.config_file, engine), path
    finally:
        await engine.stop()


def state_of(engine: Engine, name: str) -> State:
    """A server's state read through a call: mypy keeps an assert's narrowing across the awaits that change it."""
    return engine.downstreams[name].status.state


def on_disk(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


async def test_always_on_is_saved_applied_and_seen_by_a_client(running: tuple[Engine, Control, Path]) -> None:
    engine, control, path = running
    changed: list[object] = []

    async def notes(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message)

    async with Client(engine.router.server, mode="legacy", message_handler=notes, cache=None) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        assert "alpha__echo" not in before
        await control.set_tool("alpha:echo", always_on=True, aliases=["say", " say "])
        assert on_disk(path)["tools"]["alpha:echo"] == {"alwaysOn": True, "aliases": ["say"]}
        await wait_for(lambda: bool(changed), timeout=5)
        after = {t.name for t in (await client.list_tools()).tools}
        assert "alpha__echo" in after
    assert engine.catalogue.get("alpha__echo") is not None and engine.catalogue.get("alpha__echo").always_on  # type: ignore[union-attr]
    # Disabled tools leave the catalogue but stay listed for the manager (to enable them again).
    await control.set_tool("beta:echo", disabled=True)
    assert engine.catalogue.find("beta", "echo") is None
    entry = next(e for e in engine.catalogue.entries() if e.key == "beta:echo")
    assert entry.exposed is None and entry.settings.disabled


async def test_servers_added_renamed_disabled_removed(running: tuple[Engine, Control, Path], tmp_path: Path) -> None:
    engine, control, path = running
    applied: list[tuple[str, ...]] = []
    engine.events.connect(lambda e: applied.append(e.servers) if isinstance(e, ConfigApplied) else None)
    await control.set_tool("beta:echo", always_on=True)
    gamma = StdioServerConfig("gamma", **{k: v for k, v in fixture("--name", "gamma").items() if k != "env"})
    await control.put_server(gamma)
    await wait_for(lambda: state_of(engine, "gamma") is State.READY, timeout=30)
    assert list(on_disk(path)["mcpServers"]) == ["alpha", "beta", "gamma"]
    # A rename keeps the place in the file and carries the tool settings along.
    renamed = StdioServerConfig("delta", **{k: v for k, v in fixture("--name", "beta").items() if k != "env"})
    await control.put_server(renamed, replacing="beta")
    document = on_disk(path)
    assert list(document["mcpServers"]) == ["alpha", "delta", "gamma"]
    assert "delta:echo" in document["tools"] and "beta:echo" not in document["tools"]
    assert "beta" not in engine.downstreams
    await control.set_enabled("gamma", False)
    assert on_disk(path)["mcpServers"]["gamma"]["disabled"] is True
    assert state_of(engine, "gamma") is State.DISABLED
    with pytest.raises(ControlError, match="gamma is disabled; enable it to start it"):
        await control.start("gamma")
    await control.remove_server("gamma")
    assert "gamma" not in on_disk(path)["mcpServers"] and "gamma" not in engine.downstreams
    assert applied[-1] == ("alpha", "delta")


async def test_stop_start_restart_touch_no_file(running: tuple[Engine, Control, Path]) -> None:
    engine, control, path = running
    before = path.read_bytes()
    first = engine.downstreams["alpha"].process
    assert first is not None
    await control.stop("alpha")
    assert state_of(engine, "alpha") is State.STOPPED
    await control.start("alpha")
    await wait_for(lambda: state_of(engine, "alpha") is State.READY, timeout=30)
    await control.restart("alpha")
    await wait_for(lambda: state_of(engine, "alpha") is State.READY, timeout=30)
    process = engine.downstreams["alpha"].process
    assert process is not None and process.pid != first.pid
    assert path.read_bytes() == before


async def test_what_cannot_be_done_says_why_and_keeps_the_file(running: tuple[Engine, Control, Path]) -> None:
    engine, control, path = running
    with pytest.raises(ControlError, match="a server named 'alpha' exists already"):
        await control.put_server(StdioServerConfig("alpha", "true"))
    with pytest.raises(ControlError, match="server name 'bad name'"):
        await control.put_server(StdioServerConfig("bad name", "true"))
    with pytest.raises(ControlError, match="alias 'beta__echo' is already the name of beta:echo"):
        await control.set_tool("alpha:echo", aliases=["beta__echo"])
    with pytest.raises(ControlError, match=r"echo has no parameter 'words' \(its parameters: text\)"):
        await control.set_tool("alpha:echo", params={"message": "words"})
    await control.set_tool("alpha:echo", params={"message": "text"})
    assert on_disk(path)["tools"]["alpha:echo"]["params"] == {"message": "text"}
    # Edited elsewhere meanwhile: the change lands on the file as it is now.
    document = on_disk(path)
    document["synonyms"] = {"shout": ["echo"]}
    path.write_text(json.dumps(document), encoding="utf-8")
    await control.set_tool("alpha:echo", always_on=True)
    assert on_disk(path)["synonyms"] == {"shout": ["echo"]}
    # Broken on disk: refused with the file's own error, and the file stays exactly as it is.
    path.write_text('{"mcpServers": {"alpha": {"command": 3}}}', encoding="utf-8")
    broken = path.read_bytes()
    with pytest.raises(ControlError, match=r"^.*config.json:1:\d+: mcpServers.alpha.command.*fix the file first"):
        await control.set_tool("alpha:echo", always_on=False)
    assert path.read_bytes() == broken
    assert engine.catalogue.get("alpha__echo") is not None  # the running setup stays
