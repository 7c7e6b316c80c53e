"""The opt-in sentence encoder (`proxy.semanticModel: "encoder"`): it computes what torch computes,
finds paraphrases the static vectors miss, runs on one BLAS thread, is chosen by the config, embeds
tools in the engine's vector job only, and keeps its vectors apart from the static ones'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.search import encoder
from mcpmanager.core.search.index import SearchDoc, SearchIndex
from mcpmanager.core.search.semantic import CACHE_FILES, SemanticIndex, vector_cache
from mcpmanager.core.search.vector_cache import VectorCache
from mcpmanager.core.search.vectors import MODEL as STATIC_MODEL
from mcpmanager.core.system.paths import Paths
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner

REFERENCE = Path(__file__).resolve().parents[2] / "data" / "search" / "encoder_reference.json"

# A small catalogue of my own (not from any benchmark or development set).
TOOLS = [
    ("shop", "issue_refund", "Refund a charge to the card it was paid with."),
    ("shop", "cancel_subscription", "Cancel a customer's recurring subscription at the end of the period."),
    ("shop", "list_invoices", "List the invoices of a customer."),
    ("shop", "create_coupon", "Create a discount coupon code."),
    ("tickets", "list_watchers", "List the users watching an issue."),
    ("tickets", "add_comment", "Add a comment to an issue."),
    ("tickets", "assign_issue", "Assign an issue to a user."),
    ("cloud", "scale_deployment", "Set the number of replicas of a deployment."),
    ("cloud", "restart_service", "Restart a service."),
    ("cloud", "read_logs", "Read the logs of a container."),
    ("home", "set_thermostat", "Set the target temperature of the thermostat."),
    ("home", "lock_door", "Lock a smart door lock."),
    ("music", "play_track", "Play a track on the speaker."),
    ("mail", "send_email", "Send an email message."),
]
# Requests sharing no telling word with their tool, which the static vectors place wrong.
PARAPHRASES = {
    "she was overcharged, send the cash back to her card": "shop:issue_refund",
    "put on a song": "music:play_track",
    "run more copies of the web app": "cloud:scale_deployment",
}


def docs() -> list[SearchDoc]:
    spec = {"inputSchema": {"type": "object"}}
    return [SearchDoc.from_tool(s, n, f"{s}__{n}", {**spec, "description": d}) for s, n, d in TOOLS]


def best(index: SearchIndex, query: str) -> str | None:
    hits = index.search(query, 5)
    return hits[0].key if hits else None


# The model ------------------------------------------------------------------------------------------


def test_the_numpy_encoder_computes_what_torch_computes() -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    model = encoder.shipped()
    batched = model.embed_many(reference["texts"])
    alone = np.stack([model.embed(text) for text in reference["texts"]])
    assert batched.shape == expected.shape == (6, model.dims)
    assert ((batched * expected).sum(axis=1) >= 0.999).all()  # int8 weights, float32 in torch
    assert np.allclose(batched, alone, atol=1e-5)  # padding in a batch changes nothing
    assert not model.embed("").any()  # no token, no vector


def test_paraphrases_the_static_vectors_miss_the_encoder_finds() -> None:
    static = SearchIndex(semantic=SemanticIndex(model="static"))
    static.replace_all(docs())
    encoded = SearchIndex(semantic=SemanticIndex(model="encoder"))
    encoded.replace_all(docs())
    for query, wanted in PARAPHRASES.items():
        assert best(static, query) != wanted, query
        assert best(encoded, query) == wanted, query
    assert encoded.search("zxqv wplk", 5) == []  # a keyboard mash still means nothing


def test_the_forward_pass_runs_on_one_blas_thread_and_gives_the_others_back(monkeypatch: Any) -> None:
    model = encoder.shipped()
    seen: list[int] = []
    forward = model._forward

    def watched(batch: Any) -> Any:
        seen.extend(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")
        return forward(batch)

    before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    monkeypatch.setattr(model, "_forward", watched)
    model.embed_many(["list the files in a folder"] * 40)  # two batches
    assert seen and set(seen) == {1}
    assert [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"] == before


# The choice of model ---------------------------------------------------------------------------------


def test_the_model_option_round_trips_and_a_wrong_value_is_refused() -> None:
    assert parse_config("{}", "c.json").proxy.semantic_model == "static"
    config = parse_config('{"proxy": {"semanticModel": "encoder"}}', "c.json")
    assert config.proxy.semantic_model == "encoder"
    assert config.to_document()["proxy"] == {"semanticModel": "encoder"}
    with pytest.raises(ConfigError) as error:
        parse_config('{"proxy": {"semanticModel": "bert"}}', "c.json")
    assert (
        f"{error.value.key}: {error.value.reason}" == "proxy.semanticModel: expected 'static' or 'encoder', got 'bert'"
    )


def test_each_model_embeds_its_own_text_and_weighs_its_own() -> None:
    static, encoded = SemanticIndex(model="static"), SemanticIndex(model="encoder")
    assert (static.alpha, encoded.alpha) == (0.3, 1.0)
    doc = docs()[0]
    assert static.model.text(doc).startswith("issue_refund. issue_refund.")  # name twice, all of it
    assert encoded.model.text(doc) == "issue_refund. Refund a charge to the card it was paid with."
    assert encoded.vector(doc).shape == (384,) and static.vector(doc).shape == (256,)


def test_the_vector_cache_keeps_models_apart(tmp_path: Path) -> None:
    assert len(set(CACHE_FILES.values())) == 2  # a file each in the engine's cache folder
    assert SemanticIndex(model="encoder").cache.model == encoder.MODEL != STATIC_MODEL
    path = tmp_path / "vectors.npz"
    SemanticIndex(cache=vector_cache("static", path)).prepare(docs())
    encoded = vector_cache("encoder", path)
    encoded.load()
    assert len(encoded) == 0  # the static vectors are not the encoder's
    SemanticIndex(cache=vector_cache("encoder", path), model="encoder").prepare(docs())
    static = VectorCache(path)  # the default: the static model's
    static.load()
    assert len(static) == 0


def test_in_the_background_tools_wait_for_the_vector_job_instead_of_stalling_a_query() -> None:
    semantic = SemanticIndex(model="encoder", background=True)
    index = SearchIndex(semantic=semantic)
    for doc in docs():
        index.upsert(doc)  # as the engine's Discovery does: nothing embedded on the event loop
    assert len(semantic.cache) == 0
    query, wanted = "run more copies of the web app", "cloud:scale_deployment"
    assert best(index, query) is None  # no lexical match, and no vector yet
    semantic.prepare(docs())  # the vector job, in a thread
    assert best(index, query) == wanted


async def test_the_engine_switches_model_at_run_time_with_a_cache_file_each(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    servers = {"notes": {"command": "notes-server"}}
    supervisor = {"startTimeout": 5, "stopGrace": 0.1, "backoffInitial": 30}

    def config(model: str) -> Any:
        document = {"mcpServers": servers, "supervisor": supervisor, "proxy": {"semanticModel": model}}
        return parse_config(json.dumps(document), "test")

    engine = Engine(config("static"), paths, spawner=FakeSpawner())
    await engine.start()
    try:
        await wait_for(lambda: len(engine.catalogue.tools()) == 2, 5)
        # The catalogue's save ran the vector job (static): from now on only the switch runs one.
        await wait_for(lambda: (paths.cache_dir / CACHE_FILES["static"]).exists(), 10)
        await engine.apply_config(config("encoder"))
        semantic = engine.router.discovery.index.semantic
        assert semantic is not None and semantic.alpha == 1.0
        assert semantic.cache.path == paths.cache_dir / CACHE_FILES["encoder"]
        await wait_for(lambda: (paths.cache_dir / CACHE_FILES["encoder"]).exists(), 10)
        stored = vector_cache("encoder", semantic.cache.path)
        stored.load()
        assert len(stored) == 2
    finally:
        await engine.stop()
