"""The engine, fast: config → supervised servers (fake child processes) → catalogue → router, its
events, a changed config applied (only what changed restarts), its identity as `status` reads it,
and what it leaves behind when it stops. The same with real processes: tests/e2e/test_control.py,
tests/e2e/test_engine_edges.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.engine.engine import Engine, Identity
from mcpmanager.core.engine.events import CatalogueChanged, ConfigApplied, EngineEvent
from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.core.supervisor.events import StatusChanged
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner

SUPERVISOR = {"startTimeout": 5, "stopGrace": 0.1, "backoffInitial": 30}


def config(**servers: str) -> Config:
    document = {"mcpServers": {name: {"command": command} for name, command in servers.items()}}
    return parse_config(json.dumps({**document, "supervisor": SUPERVISOR}), "test")


async def until_ready(engine: Engine) -> None:
    downstreams = engine.downstreams
    await wait_for(lambda: downstreams and all(d.status.state is State.READY for d in downstreams.values()), 5)


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})


@pytest.fixture
def spawner() -> FakeSpawner:
    return FakeSpawner()


@pytest.fixture
async def engine(paths: Paths, spawner: FakeSpawner) -> AsyncIterator[Engine]:
    made = Engine(config(notes="notes-server", files="files-server"), paths, spawner=spawner)
    await made.start()
    await until_ready(made)
    try:
        yield made
    finally:
        await made.stop()


async def test_servers_come_up_and_their_tools_fill_the_catalogue(paths: Paths) -> None:
    spawner = FakeSpawner()
    engine = Engine(config(notes="notes-server", files="files-server"), paths, spawner=spawner)
    seen: list[EngineEvent] = []
    engine.events.connect(seen.append)
    await engine.start()
    try:
        await until_ready(engine)
        assert {t.exposed for t in engine.catalogue.tools()} == {
            "notes__echo",
            "notes__block",
            "files__echo",
            "files__block",
        }
        ready = [e.server for e in seen if isinstance(e, StatusChanged) and e.status.state is State.READY]
        assert sorted(ready) == ["files", "notes"]
        assert any(isinstance(e, CatalogueChanged) for e in seen)
    finally:
        await engine.stop()
    assert all(child.stopped for children in spawner.children.values() for child in children)
    cache = json.loads((paths.cache_dir / "catalogue.json").read_text(encoding="utf-8"))
    assert sorted(cache["servers"]) == ["files", "notes"]  # the next start answers from it
    assert list((paths.runtime_dir / "engines").glob("*.json")) == []  # the advertisement is gone


async def test_a_changed_config_restarts_only_what_changed(engine: Engine, spawner: FakeSpawner) -> None:
    applied: list[tuple[str, ...]] = []
    engine.events.connect(lambda e: applied.append(e.servers) if isinstance(e, ConfigApplied) else None)
    await engine.apply_config(config(notes="notes-server", files="files-server-2", more="more-server"))
    await until_ready(engine)
    assert applied == [("notes", "files", "more")]
    assert [len(spawner.children[name]) for name in ("notes", "files", "more")] == [1, 2, 1]
    await engine.apply_config(config(notes="notes-server"))
    assert list(engine.downstreams) == ["notes"]
    assert {t.server for t in engine.catalogue.tools()} == {"notes"}


async def test_synonyms_are_taken_from_a_changed_config(engine: Engine) -> None:
    before = engine.router.discovery
    assert before.search_names("jot", 1) == []
    changed = Config(engine.config.servers, synonyms={"jot": ["echo"]}, supervisor=engine.config.supervisor)
    await engine.apply_config(changed)
    assert engine.router.discovery is not before
    assert engine.router.discovery.search_names("jot", 1)  # the synonym finds `echo`


async def test_calls_reach_the_front_ends_as_events(engine: Engine) -> None:
    records: list[CallRecord] = []
    engine.events.connect(lambda e: records.append(e) if isinstance(e, CallRecord) else None)
    async with Client(engine.router.server, mode="legacy", cache=None) as client:
        result = await client.call_tool("notes__echo", {"text": "hi"})
    assert not result.is_error
    assert [r.outcome for r in records] == ["pending", "pending", "ok"]  # begun, resolved, finished


async def test_the_identity_is_what_status_reads(paths: Paths) -> None:
    identity = Identity("gui", "bundled demo servers", paths.runtime_dir / "token")
    engine = Engine(config(), paths, identity=identity)
    await engine.start()
    try:
        described = engine.describe()
        assert (described["front_end"], described["config"], described["urls"]) == ("gui", "bundled demo servers", {})
        engine.listening("http://127.0.0.1:4321/mcp")
        described = engine.describe()
        assert described["urls"] == {
            "discovery": "http://127.0.0.1:4321/mcp/discovery",
            "direct": "http://127.0.0.1:4321/mcp/direct",
        }
        engine.adopt_config_file()  # the demo became the user's config
        advertised = json.loads(next((paths.runtime_dir / "engines").glob("*.json")).read_text(encoding="utf-8"))
        assert advertised["config"] == str(paths.config_file)
        assert advertised["endpoint"] == "http://127.0.0.1:4321/mcp"
        assert advertised["token_file"] == str(paths.runtime_dir / "token")
    finally:
        await engine.stop()
