"""The engine computes the tools' search vectors off the event loop when the catalogue changes and
keeps them on disk beside the catalogue cache; `proxy.semanticSearch: false` turns the side off."""

from __future__ import annotations

import json
from pathlib import Path

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.engine.engine import SEARCH_VECTORS, Engine
from mcpmanager.core.search.vector_cache import VectorCache
from mcpmanager.core.system.paths import Paths
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner

SUPERVISOR = {"startTimeout": 5, "stopGrace": 0.1, "backoffInitial": 30}


def config(semantic: bool) -> Config:
    servers = {"notes": {"command": "notes-server"}, "files": {"command": "files-server"}}
    document = {"mcpServers": servers, "supervisor": SUPERVISOR, "proxy": {"semanticSearch": semantic}}
    return parse_config(json.dumps(document), "test")


async def test_the_vectors_are_computed_in_the_background_and_cached_on_disk(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    engine = Engine(config(True), paths, spawner=FakeSpawner())
    await engine.start()
    try:
        cache_file = paths.cache_dir / SEARCH_VECTORS
        await wait_for(lambda: len(engine.catalogue.tools()) == 4, 5)
        # One per text: both fake servers list the same two tools, and a vector is the text's.
        await wait_for(lambda: _stored(cache_file) == 2, 5)
        semantic = engine.router.discovery.index.semantic
        assert semantic is not None and semantic.cache.path == cache_file
        await engine.apply_config(config(False))
        assert engine.router.discovery.index.semantic is None
    finally:
        await engine.stop()


def _stored(path: Path) -> int:
    cache = VectorCache(path)
    cache.load()
    return len(cache)
