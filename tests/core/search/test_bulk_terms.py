"""A rebuild's weights (`bulk_terms`, numpy over the whole catalogue) against an upsert's
(`doc_terms`, one tool at a time): the same, bit for bit, on real catalogues and awkward texts."""

from __future__ import annotations

import random

import pytest

from mcpmanager.core.search.bulk_terms import bulk_terms
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.fields import doc_terms
from tests.core.search.samples import awkward_text, docs_of


@pytest.mark.parametrize("name", ["published", "livemcpbench"])
def test_a_rebuild_weighs_every_tool_as_an_upsert_does(name: str) -> None:
    assert_as_upserts(docs_of(name))


@pytest.mark.parametrize("seed", range(3))
def test_tools_of_awkward_texts_weigh_as_upserts_do(seed: int) -> None:
    # Fields of no words (but camelCase wholes), repeated words and texts, servers in names, texts
    # for `analyze` itself beside joined ones.
    rng = random.Random(seed)
    servers = ["github", "my-Server", "", "東京"]
    docs = []
    for i in range(400):
        server = rng.choice(servers)
        name = rng.choice([f"{server}_{awkward_text(rng)}", awkward_text(rng), "ItIs", f"{server}.x"])
        params = tuple((awkward_text(rng), awkward_text(rng)) for _ in range(rng.randint(0, 4)))
        docs.append(SearchDoc(f"{server}:{i}", server, name, name, awkward_text(rng), awkward_text(rng), params))
    assert_as_upserts(docs)


def assert_as_upserts(docs: list[SearchDoc]) -> None:
    built = bulk_terms(docs)
    assert len(built.lengths) == len(docs) == len(built.name_terms)
    start = 0
    for doc, length, name_terms in zip(docs, built.lengths.tolist(), built.name_terms, strict=True):
        ids, weights = built.term_ids[start : start + length], built.weights[start : start + length]
        start += length
        alone = doc_terms(doc)
        assert {built.vocabulary[t]: w for t, w in zip(ids.tolist(), weights.tolist(), strict=True)} == alone.weights
        assert name_terms == alone.name_terms
    assert start == len(built.term_ids)


def test_an_empty_catalogue_and_tools_without_words() -> None:
    assert len(bulk_terms([]).term_ids) == 0
    bare = SearchDoc("s:x", "s", "x", "x", "", "", ())
    built = bulk_terms([bare, *docs_of("published")[:3]])
    assert built.lengths.tolist()[0] == len(doc_terms(bare).weights)
