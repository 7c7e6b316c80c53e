"""Every tool's BM25F weights at once, for a rebuild: the arithmetic of `fields.doc_terms`, done with
numpy over the whole catalogue instead of a dict per tool.

A rebuild of 20,000 tools adds up about a million (tool, term, field scale) occurrences. Per tool in
Python that was a dict update each; here the distinct texts are analysed together (`bulk_analyzer`),
every tool's texts are one array of text ids, its field lengths and scales are array sums, its
occurrences one gather of the texts' term ids, and one stable sort by (tool, term) with a
sequential sum gives every term frequency. The sort keeps occurrences in field order, so each
frequency is summed in the order `doc_terms` sums it and the weights come out the same, bit for
bit (the tests compare).
Upserts of a few tools keep using `doc_terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.bulk_analyzer import Analyses, analyze_all, ranges
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.fields import (
    DESCRIPTION,
    K1,
    NAME,
    PARAM_NAMES,
    PARAM_TEXT,
    SERVER,
    TITLE,
    own_name,
)
from mcpmanager.core.search.sorting import stable_sort

IntArray = npt.NDArray[np.int64]
# The fields in the order `doc_terms` adds them up; each tool's texts come in this order, then its own
# name (`own_name`, for the name bonus: not indexed).
_FIELDS = (NAME, TITLE, DESCRIPTION, PARAM_NAMES, PARAM_TEXT, SERVER)
_OWN = len(_FIELDS)
_WEIGHT = np.array([f.weight for f in _FIELDS])
_B = np.array([f.b for f in _FIELDS])
_PIVOT = np.array([f.pivot for f in _FIELDS])
_PAIRS = np.array([f.pairs for f in _FIELDS] + [False])


@dataclass(frozen=True)
class Built:
    """Each tool's terms as runs, tool after tool: `term_ids[start:start + lengths[i]]` with their
    `weights`, term ids indexing `vocabulary`."""

    vocabulary: list[str]
    term_ids: IntArray
    weights: npt.NDArray[np.float64]
    lengths: IntArray
    name_terms: list[tuple[str, ...]]


def bulk_terms(docs: Sequence[SearchDoc]) -> Built:
    texts, params = _texts(docs)
    distinct = list(dict.fromkeys(texts))
    number = dict(zip(distinct, range(len(distinct)), strict=True))
    text_ids = np.fromiter(map(number.__getitem__, texts), dtype=np.int64, count=len(texts))
    analyses = analyze_all(distinct)
    vocabulary, renumber = _first_seen(analyses)
    # Each text's tool and field: a tool has name, title, description, its parameters' names and
    # texts, server, own name.
    sizes = 5 + 2 * params
    owners = np.repeat(np.arange(len(docs), dtype=np.int64), sizes)
    place = np.arange(len(texts), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    count = params[owners]
    field = np.minimum(place, 3) + (place >= 3 + count) + (place >= 3 + 2 * count) + (place >= 4 + 2 * count)
    # Field lengths in words, and the scale of each field's occurrences, as `doc_terms` computes it.
    words = analyses.words[text_ids]
    slot = owners * (_OWN + 1) + field
    length = np.bincount(slot, weights=words, minlength=len(docs) * (_OWN + 1)).reshape(-1, _OWN + 1)[:, :_OWN]
    scale = _WEIGHT / (1.0 - _B + _B * length / _PIVOT)
    used = np.flatnonzero(field < _OWN)
    used = used[length.reshape(-1)[owners[used] * _OWN + field[used]] > 0]
    # Every occurrence: each used text's terms (its phrases where its field takes them), in order.
    starts = analyses.starts[text_ids[used]]
    ends = np.where(
        _PAIRS[field[used]], analyses.starts[text_ids[used] + 1], starts + words[used] + analyses.wholes[text_ids[used]]
    )
    sizes = ends - starts
    term_ids = renumber[analyses.ids[ranges(starts, sizes)]]
    occurrence_scales = np.repeat(scale.reshape(-1)[owners[used] * _OWN + field[used]], sizes)
    occurrence_docs = np.repeat(owners[used], sizes)
    name_terms = _name_terms(analyses, vocabulary, renumber, text_ids[field == _OWN])
    return _summed(vocabulary, term_ids, occurrence_scales, occurrence_docs, len(docs), name_terms)


def _texts(docs: Sequence[SearchDoc]) -> tuple[list[str], IntArray]:
    texts: list[str] = []
    params: list[int] = []
    add, extend = texts.append, texts.extend
    for doc in docs:
        pairs = doc.params
        extend((doc.name, doc.title, doc.description))
        if pairs:
            extend([name for name, _ in pairs])
            extend([text for _, text in pairs])
        add(doc.server)
        add(own_name(doc))
        params.append(len(pairs))
    return texts, np.array(params, dtype=np.int64)


def _first_seen(analyses: Analyses) -> tuple[list[str], IntArray]:
    """The terms numbered in the order the texts bring them (as an upsert's `Postings` would meet
    them), and the renumbering from the analyses' ids."""
    ids = analyses.ids
    first = np.full(len(analyses.terms), len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=np.int64))
    seen = np.flatnonzero(first < len(ids))
    order = seen[np.argsort(first[seen])]
    renumber = np.full(len(analyses.terms), -1, dtype=np.int64)
    renumber[order] = np.arange(len(order), dtype=np.int64)
    terms = analyses.terms
    return [terms[i] for i in order.tolist()], renumber


def _name_terms(analyses: Analyses, vocabulary: list[str], renumber: IntArray, own: IntArray) -> list[tuple[str, ...]]:
    """Each tool's distinct own-name words, for the name bonus."""
    sizes = analyses.words[own]
    words = [vocabulary[i] for i in renumber[analyses.ids[ranges(analyses.starts[own], sizes)]].tolist()]
    ends = np.cumsum(sizes).tolist()
    return [tuple(dict.fromkeys(words[end - size : end])) for end, size in zip(ends, sizes.tolist(), strict=True)]


def _summed(
    vocabulary: list[str],
    term_ids: IntArray,
    occurrence_scales: npt.NDArray[np.float64],
    occurrence_docs: IntArray,
    docs: int,
    name_terms: list[tuple[str, ...]],
) -> Built:
    """Each (tool, term)'s frequency, summed in occurrence order, saturated."""
    # One key per (tool, term); a stable sort keeps each key's occurrences in field order.
    width = max(len(vocabulary), 1)
    keys, order = stable_sort(occurrence_docs * width + term_ids, docs * width)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else keys
    # np.add.at adds in array order, one element at a time, so each frequency is 0 + s1 + s2 + …
    # exactly as `doc_terms` adds it (reduceat may sum long runs pairwise: a last bit apart).
    group = np.cumsum(np.concatenate(([False], keys[1:] != keys[:-1]))) if len(keys) else keys
    frequencies = np.zeros(len(starts), dtype=np.float64)
    np.add.at(frequencies, group, occurrence_scales[order])
    weights = frequencies * (K1 + 1.0) / (frequencies + K1)
    first = keys[starts] if len(keys) else keys
    lengths = np.bincount(first // width, minlength=docs).astype(np.int64)
    return Built(vocabulary, first % width, weights, lengths, name_terms)
