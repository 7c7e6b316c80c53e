"""A rebuild's analysis of every text at once (`analyze_all`) against `analyze`, text by text: the same
words, camelCase wholes and pairs, in the same order."""

from __future__ import annotations

import random

import pytest

from mcpmanager.core.search.analyzer import analyze
from mcpmanager.core.search.bulk_analyzer import SEP, Analyses, _plain, analyze_all
from mcpmanager.core.search.fields import PHRASE, own_name
from tests.core.search.samples import awkward_text, docs_of


def terms_of(analyses: Analyses, index: int) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Text `index`'s (words, wholes, pairs), as `analyze` gives them."""
    terms = [analyses.terms[i] for i in analyses.ids[analyses.starts[index] : analyses.starts[index + 1]].tolist()]
    words, wholes = int(analyses.words[index]), int(analyses.wholes[index])
    phrases = terms[words + wholes :]
    assert all(p.startswith(PHRASE) for p in phrases)
    return tuple(terms[:words]), tuple(terms[words : words + wholes]), tuple(p[1:] for p in phrases)


def assert_as_analyze(texts: list[str]) -> None:
    analyses = analyze_all(texts)
    assert len(analyses.starts) == len(texts) + 1
    for index, text in enumerate(texts):
        expected = analyze.__wrapped__(text)
        assert terms_of(analyses, index) == (expected.words, expected.wholes, expected.pairs), text


@pytest.mark.parametrize("name", ["published", "livemcpbench"])
def test_every_text_of_a_catalogue_has_the_terms_analyze_gives_it(name: str) -> None:
    texts: dict[str, None] = {}
    for doc in docs_of(name):
        texts.update(dict.fromkeys([doc.name, doc.title, doc.description, doc.server, own_name(doc)]))
        texts.update(dict.fromkeys(part for param in doc.params for part in param))
    assert len(texts) > 1000
    assert_as_analyze(list(texts))


@pytest.mark.parametrize("seed", range(3))
def test_texts_made_of_awkward_pieces_have_the_terms_analyze_gives_them(seed: int) -> None:
    rng = random.Random(seed)
    assert_as_analyze(list(dict.fromkeys(awkward_text(rng) for _ in range(3000))))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "the of a",
        "getPRs and listURLs",
        "AnyOne WhatEver ItIs",  # camelCase wholes that are stop words are dropped
        "user name, username and userName",  # a pair that is also a word of its text is no phrase
        "x" * 80 + " kept",
        "x" * 81 + " dropped",
        "x" * 79 + "’y dropped too",  # a character outside ASCII counts in a run
        "x" * 79 + "\u00a0y kept",  # ... unless it is a space
        "<b>Bold</b> &amp; [link text](https://example.com/a_b) <service-name>",
        "don’t stop — launch 🚀 rocketLaunch",
        "café naïve 東京都庁 data",
        f"a{SEP}b",
    ],
)
def test_edge_cases_have_the_terms_analyze_gives_them(text: str) -> None:
    assert_as_analyze(["other words first", text])


def test_the_joined_path_takes_every_text_without_word_characters_outside_ascii() -> None:
    # Else the comparisons above would only check `analyze` against itself.
    assert _plain("getPRs <b>x</b>") == "getPRs  x "
    assert _plain("don’t — 🚀\u00a0x") == "don\x7ft \x7f \x7f x"
    assert _plain("café") is None and _plain("東京") is None and _plain(f"a{SEP}b") is None


def test_no_texts() -> None:
    analyses = analyze_all([])
    assert analyses.starts.tolist() == [0] and len(analyses.ids) == 0
