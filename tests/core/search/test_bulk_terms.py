"""A rebuild's weights (`bulk_terms`, numpy over the whole catalogue) against an upsert's
(`doc_terms`, one tool at a time): the same, bit for bit, on real catalogues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpmanager.core.catalogue.exposed_names import assign_exposed_names
from mcpmanager.core.search.bulk_terms import bulk_terms
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.fields import doc_terms

CATALOGUES = Path(__file__).resolve().parents[2] / "data" / "catalogues"


def docs_of(name: str) -> list[SearchDoc]:
    tools = json.loads((CATALOGUES / f"{name}.json").read_text(encoding="utf-8"))
    exposed = assign_exposed_names((str(t["server"]), str(t["name"])) for t in tools)
    return [SearchDoc.from_tool(t["server"], t["name"], exposed[(t["server"], t["name"])], t) for t in tools]


@pytest.mark.parametrize("name", ["published", "livemcpbench"])
def test_a_rebuild_weighs_every_tool_as_an_upsert_does(name: str) -> None:
    docs = docs_of(name)
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
