"""The inverted index's rebuild in one pass (`load`) against adding each document and compacting."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mcpmanager.core.search.postings import Postings


def _entries(seed: int, twice: int) -> list[tuple[str, dict[str, float]]]:
    """300 documents of up to 12 of 60 words (some of none); the last `twice` keys come twice."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)]
    out = []
    for i in range(300):
        terms = rng.sample(words, rng.randint(0, 12))
        out.append((f"s:t{i % (300 - twice)}", {t: rng.random() for t in terms}))
    return out


def _built(entries: list[tuple[str, dict[str, float]]], load: bool) -> Postings:
    postings = Postings()
    if load:
        postings.add("stale:key", {"gone": 1.0})  # what was there before is forgotten
        postings.load(entries)
    else:
        for key, weights in entries:
            postings.add(key, weights)
        postings.compact()
    return postings


def _content(postings: Postings) -> dict[str, dict[str, float]]:
    """term → {key: weight}, read through the public queries."""
    out: dict[str, dict[str, float]] = {}
    for term in [f"w{i}" for i in range(60)] + ["gone"]:
        scores = np.zeros(postings.slots)
        postings.accumulate(scores, term, 1.0)
        live = np.flatnonzero(scores * postings.alive())  # removed documents are masked, as in a search
        found = {postings.key(int(slot)): float(scores[slot]) for slot in live}
        if found:
            out[term] = {str(key): value for key, value in found.items()}
        assert postings.df(term) == len(found)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_load_gives_exactly_the_arrays_of_adding_and_compacting(seed: int) -> None:
    entries = _entries(seed, twice=0)
    loaded, added = _built(entries, load=True), _built(entries, load=False)
    assert loaded._keys == added._keys and loaded._ids == added._ids and loaded._df == added._df
    for name in ("_ptr", "_slots", "_values", "_alive"):
        assert np.array_equal(getattr(loaded, name), getattr(added, name)), name
    for mine, theirs in zip(loaded._forward, added._forward, strict=True):
        assert mine is not None and theirs is not None
        assert np.array_equal(mine[0], theirs[0]) and np.array_equal(mine[1], theirs[1])


@pytest.mark.parametrize("seed", range(4))
def test_a_key_given_twice_keeps_its_last_weights_as_add_does(seed: int) -> None:
    entries = _entries(seed, twice=20)
    loaded, added = _built(entries, load=True), _built(entries, load=False)
    assert loaded._keys == added._keys and len(loaded) == len(added) == 280
    assert _content(loaded) == _content(added)
    loaded.remove("s:t3")  # changes after a load behave as after a compaction
    added.remove("s:t3")
    loaded.add("s:new", {"w1": 0.5})
    added.add("s:new", {"w1": 0.5})
    assert _content(loaded) == _content(added)
