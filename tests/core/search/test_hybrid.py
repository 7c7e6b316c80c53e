"""The semantic side of search: the shipped vectors, a paraphrase BM25F cannot find, the fusion's
order and floors, the switch to turn it off, and the vector cache (in memory and on disk)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcpmanager.core.search import hybrid
from mcpmanager.core.search.document import Hit
from mcpmanager.core.search.index import SearchDoc, SearchIndex
from mcpmanager.core.search.semantic import SemanticIndex
from mcpmanager.core.search.vector_cache import VectorCache
from mcpmanager.core.search.vectors import TokenVectors, shipped

CATALOGUES = Path(__file__).resolve().parents[2] / "data" / "catalogues"


def tool(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}}


# A small home catalogue of my own; the queries below share no word with the tool they mean.
HOME = [
    ("home", tool("set_thermostat", "Set the target temperature of the heating system.", degrees="In Celsius")),
    ("home", tool("lock_door", "Lock or unlock the front door.", locked="true to lock")),
    ("home", tool("water_garden", "Turn on the garden irrigation for some minutes.", minutes="How long")),
    ("media", tool("play_song", "Play a song or playlist on the speakers.", title="Song title")),
    ("media", tool("set_volume", "Change the speaker volume.", level="0 to 100")),
    ("shop", tool("order_groceries", "Order food and household items for delivery.", items="What to buy")),
    ("shop", tool("track_parcel", "Show where a shipped package is now.", tracking_id="The carrier's number")),
    ("mail", tool("send_email", "Send an email message.", to="Recipient", body="Text")),
]


def docs() -> list[SearchDoc]:
    return [SearchDoc.from_tool(server, spec["name"], spec["name"], spec) for server, spec in HOME]


def test_the_shipped_vectors_load_and_mean_something() -> None:
    vectors = shipped()
    assert vectors.matrix.shape == (len(vectors.wordpiece.vocab), 256)
    assert vectors.matrix.dtype == np.float16  # as shipped: half the memory
    assert np.isfinite(vectors.matrix).all()
    cold = vectors.embed("chilly weather outside")
    assert float(np.linalg.norm(cold)) == pytest.approx(1.0, abs=1e-5)
    assert cold @ vectors.embed("freezing temperature") > cold @ vectors.embed("invoice payment") + 0.2
    assert not vectors.embed("the of and ?!").any()  # stop words and punctuation weigh nothing


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sprinkle the lawn", "home:water_garden"),
        ("put on some tunes", "media:play_song"),
        ("secure the entrance", "home:lock_door"),
        ("make the house warmer", "home:set_thermostat"),
    ],
)
def test_a_paraphrase_is_found_by_the_hybrid_and_not_by_bm25f(query: str, expected: str) -> None:
    lexical = SearchIndex(semantic=False)
    lexical.replace_all(docs())
    assert expected not in [h.key for h in lexical.search(query, 5)]
    both = SearchIndex()
    both.replace_all(docs())
    assert [h.key for h in both.search(query, 5)][:1] == [expected]


def test_the_semantic_side_adds_to_what_bm25f_found() -> None:
    lexical = SearchIndex(semantic=False)
    lexical.replace_all(docs())
    both = SearchIndex()
    both.replace_all(docs())
    query = "where is my delivery"  # `delivery` is only in order_groceries' text
    assert [h.key for h in lexical.search(query, 5)] == ["shop:order_groceries"]
    assert [h.key for h in both.search(query, 5)] == ["shop:order_groceries", "shop:track_parcel"]


def test_unrelated_text_still_finds_nothing() -> None:
    both = SearchIndex()
    both.replace_all(docs())
    for query in ("zxqv wplk", "the of and", "?!", "asdf qwer"):
        assert both.search(query, 5) == [], query


def test_keyboard_mash_finds_nothing_on_a_real_catalogue() -> None:
    # 508 real tools, some named with odd fragments (`d1_query`, `r2_put_object`): a query of
    # words the vocabulary only knows as fragments (`zxqv` is z ##x ##q ##v) used to land on them
    tools = json.loads((CATALOGUES / "published.json").read_text(encoding="utf-8"))
    index = SearchIndex()
    index.replace_all([SearchDoc.from_tool(t["server"], t["name"], f"{t['server']}_{t['name']}", t) for t in tools])
    for query in ("zxqv wplk", "asdf qwer zxcv", "qqqq", "ipsum dolor"):
        assert index.search(query, 5) == [], query
    # a request in plain words still finds its tool by meaning alone
    assert "stripe:create_refund" in {h.key for h in index.search("give the customer a refund", 5)}


def test_semantic_false_is_bm25f_alone() -> None:
    index = SearchIndex(semantic=False)
    index.replace_all(docs())
    assert index.semantic is None
    assert index.search("sprinkle the lawn", 5) == []
    assert [h.key for h in index.search("lock the door", 2)] == [h.key for h in index.lexical("lock the door", 2)]


# The fusion ---------------------------------------------------------------------------------------

KEYS = ["a", "b", "c", "d"]


def _fuse(lexical: list[Hit], cosines: list[float], limit: int = 4) -> list[Hit]:
    array = np.array(cosines, dtype=np.float32)
    return hybrid.fuse(lexical, array, KEYS.index, KEYS.__getitem__, limit, depth=4)


def test_fusion_is_lexical_over_its_best_plus_alpha_times_the_cosine_lift() -> None:
    # a: the lexical winner, nearly average in meaning; b: half its lexical score, the nearest.
    fused = _fuse([Hit("a", 10.0), Hit("b", 5.0)], [0.3, 0.9, 0.2, 0.2])
    mean = (0.3 + 0.9 + 0.2 + 0.2) / 4
    expected_a = 1.0 + hybrid.ALPHA * (0.3 - mean) / (0.9 - mean)
    expected_b = 0.5 + hybrid.ALPHA
    assert [h.key for h in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(expected_a, rel=1e-5)
    assert fused[1].score == pytest.approx(expected_b, rel=1e-5)


def test_a_tool_without_lexical_match_needs_a_near_and_standing_out_cosine() -> None:
    # c is near enough and well above the average: it joins, after the lexical hit.
    assert [h.key for h in _fuse([Hit("a", 1.0)], [0.1, 0.1, 0.6, 0.1])] == ["a", "c"]
    # Under MIN_COSINE: not returned however it stands out.
    assert [h.key for h in _fuse([Hit("a", 1.0)], [0.01, 0.01, 0.28, 0.01])] == ["a"]
    # Near, but so is everything (a general drift, not a match).
    assert [h.key for h in _fuse([], [0.55, 0.5, 0.6, 0.5])] == []
    # The semantic ranking alone, when BM25F has nothing.
    assert [h.key for h in _fuse([], [0.1, 0.7, 0.1, 0.6])] == ["b", "d"]


def test_ties_keep_bm25fs_order_and_no_query_vector_is_bm25f() -> None:
    tied = _fuse([Hit("b", 2.0), Hit("a", 2.0)], [0.5, 0.5, 0.1, 0.1])
    assert [h.key for h in tied] == ["b", "a"]
    lexical = [Hit("b", 2.0), Hit("a", 1.0)]
    empty = np.zeros(0, dtype=np.float32)
    assert hybrid.fuse(lexical, empty, KEYS.index, KEYS.__getitem__, 1, 4) == lexical[:1]


# The semantic index and its cache --------------------------------------------------------------


class Counting(TokenVectors):
    def __init__(self) -> None:
        base = shipped()
        super().__init__(list(base.wordpiece.vocab), base.matrix)
        self.embedded = 0

    def embed(self, text: str) -> Any:
        self.embedded += 1
        return super().embed(text)


def test_prepare_computes_ahead_so_that_upserts_only_look_up() -> None:
    vectors = Counting()
    semantic = SemanticIndex(vectors)
    semantic.prepare(docs())
    assert vectors.embedded == len(HOME)
    index = SearchIndex(semantic=semantic)
    index.replace_all(docs())
    assert vectors.embedded == len(HOME)  # every tool's vector came from the cache


def test_the_cache_survives_on_disk_and_is_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "vectors.npz"
    first = SemanticIndex(Counting(), VectorCache(path))
    first.prepare(docs())
    assert path.exists()
    again = Counting()
    second = SemanticIndex(again, VectorCache(path))
    second.prepare(docs())
    assert again.embedded == 0  # all read from the file
    assert np.allclose(second.vector(docs()[0]), first.vector(docs()[0]), atol=1e-3)  # stored as float16
    second.prepare(docs()[:3])  # the others' tools are gone: so are their vectors
    reloaded = VectorCache(path)
    reloaded.load()
    assert len(reloaded) == 3


def test_a_cache_of_other_vectors_or_a_broken_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "vectors.npz"
    SemanticIndex(Counting(), VectorCache(path, model="old")).prepare(docs())
    other = VectorCache(path)  # the current model
    other.load()
    assert len(other) == 0
    path.write_bytes(b"not a numpy file")
    broken = VectorCache(path)
    broken.load()
    assert len(broken) == 0


def test_semantic_updates_equal_a_rebuild_and_removed_tools_are_gone() -> None:
    incremental = SearchIndex()
    incremental.replace_all(docs()[:4])
    for doc in docs()[4:]:
        incremental.upsert(doc)
    incremental.remove("home:water_garden")
    rebuilt = SearchIndex()
    rebuilt.replace_all([d for d in docs() if d.key != "home:water_garden"])
    for query in ("sprinkle the lawn", "put on some tunes", "where is my parcel"):
        assert incremental.search(query, 5) == rebuilt.search(query, 5)
    assert "home:water_garden" not in {h.key for h in incremental.search("sprinkle the lawn", 5)}


# The switch -----------------------------------------------------------------------------------------


def test_the_proxy_setting_turns_the_semantic_side_on_by_default_and_off(tmp_path: Path) -> None:
    from mcpmanager.core.catalogue.catalogue import Catalogue
    from mcpmanager.core.config.load import parse_config
    from mcpmanager.core.proxy.router import Router

    assert parse_config("{}", "c.json").proxy.semantic_search is True
    assert parse_config('{"proxy": {"semanticSearch": false}}', "c.json").proxy.semantic_search is False
    router = Router(Catalogue(tmp_path / "catalogue.json"), {})
    assert router.discovery.index.semantic is not None
    router.use_search_vectors(None)
    assert router.discovery.index.semantic is None
    router.use_synonyms({"ship": ["deploy"]})  # a later rebuild keeps it off
    assert router.discovery.index.semantic is None
    cache = VectorCache(tmp_path / "vectors.npz")
    router.use_search_vectors(cache)
    semantic = router.discovery.index.semantic
    assert semantic is not None and semantic.cache is cache


def test_the_engines_vector_job_fills_the_cache_so_that_the_event_loop_only_looks_up(tmp_path: Path) -> None:
    import threading

    from mcpmanager.core.catalogue.catalogue import Catalogue
    from mcpmanager.core.config.settings import ToolSettings
    from mcpmanager.core.proxy.discovery import Discovery

    catalogue = Catalogue(tmp_path / "catalogue.json")
    catalogue.configure(["home", "media", "shop", "mail"], dict[str, ToolSettings]())
    for server in ("home", "media", "shop", "mail"):
        catalogue.set_tools(server, [spec for s, spec in HOME if s == server], save=False)
    vectors = Counting()
    path = tmp_path / "vectors.npz"
    discovery = Discovery(catalogue, SearchIndex(semantic=SemanticIndex(vectors, VectorCache(path))))
    worker = threading.Thread(target=discovery.vector_job())  # as the engine runs it: in a thread
    worker.start()
    worker.join()
    assert vectors.embedded == len(HOME) and path.exists()
    discovery.sync()  # on the event loop: every vector is ready
    assert vectors.embedded == len(HOME)
    assert discovery.search_names("sprinkle the lawn", 1) == ["water_garden"]
    off = Discovery(catalogue, SearchIndex(semantic=False))
    off.vector_job()()  # nothing to do when the semantic side is off
