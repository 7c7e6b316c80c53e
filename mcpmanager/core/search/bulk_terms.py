"""Every tool's BM25F weights at once, for a rebuild: the arithmetic of `fields.doc_terms`, done with
numpy over the whole catalogue instead of a dict per tool.

A rebuild of 20,000 tools adds up about a million (tool, term, field scale) occurrences. Per tool in
Python that was a dict update each; here each distinct text becomes an array of term ids once, a
tool's occurrences are a few array pieces, and one stable sort by (tool, term) with a segmented
sum gives every term frequency. The sort keeps occurrences in field order, so each frequency is
summed in the order `doc_terms` sums it and the weights come out the same, bit for bit (the tests
compare).
Upserts of a few tools keep using `doc_terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.analyzer import analyze
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.fields import (
    DESCRIPTION,
    K1,
    NAME,
    PARAM_NAMES,
    PARAM_TEXT,
    PHRASE,
    SERVER,
    TITLE,
    own_name,
)

IntArray = npt.NDArray[np.int64]
# Past analyze's own cache: `_Texts` remembers each text for the build, and a build of 40,000
# distinct texts through a 16,384-entry cache would only churn it (and evict what queries use).
_analyze = analyze.__wrapped__


@dataclass(frozen=True)
class Built:
    """Each tool's terms as runs, tool after tool: `term_ids[start:start + lengths[i]]` with their
    `weights`, term ids indexing `vocabulary`."""

    vocabulary: list[str]
    term_ids: IntArray
    weights: npt.NDArray[np.float64]
    lengths: IntArray
    name_terms: list[tuple[str, ...]]


# A text's word count, term ids (words, then camelCase wholes), phrase term ids, and its words.
_Text = tuple[int, IntArray, IntArray, tuple[str, ...]]


class _Texts:
    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self._seen: dict[str, _Text] = {}

    def __call__(self, text: str) -> _Text:
        found = self._seen.get(text)
        if found is None:
            analyzed = _analyze(text)
            ids = self._ids(analyzed.words + analyzed.wholes)
            phrases = self._ids([PHRASE + pair for pair in analyzed.pairs])
            found = self._seen[text] = (len(analyzed.words), ids, phrases, analyzed.words)
        return found

    def _ids(self, terms: Sequence[str]) -> IntArray:
        vocabulary = self.vocabulary
        ids = []
        for term in terms:
            term_id = vocabulary.get(term)
            if term_id is None:
                term_id = vocabulary[term] = len(vocabulary)
            ids.append(term_id)
        return np.array(ids, dtype=np.int64)


def bulk_terms(docs: Sequence[SearchDoc]) -> Built:
    texts = _Texts()
    pieces: list[IntArray] = []
    scales: list[float] = []
    owners: list[int] = []
    name_terms: list[tuple[str, ...]] = []
    for index, doc in enumerate(docs):
        fields = (
            (NAME, (texts(doc.name),)),
            (TITLE, (texts(doc.title),)),
            (DESCRIPTION, (texts(doc.description),)),
            (PARAM_NAMES, tuple(texts(name) for name, _ in doc.params)),
            (PARAM_TEXT, tuple(texts(text) for _, text in doc.params)),
            (SERVER, (texts(doc.server),)),
        )
        for field, parts in fields:
            length = sum(part[0] for part in parts)
            if not length:
                continue
            scale = field.weight / (1.0 - field.b + field.b * length / field.pivot)
            for _, ids, phrases, _ in parts:
                pieces.append(ids)
                scales.append(scale)
                owners.append(index)
                if field.pairs:
                    pieces.append(phrases)
                    scales.append(scale)
                    owners.append(index)
        name_terms.append(tuple(dict.fromkeys(texts(own_name(doc))[3])))
    vocabulary = list(texts.vocabulary)
    sizes = np.array([len(p) for p in pieces], dtype=np.int64)
    term_ids = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    occurrence_scales = np.repeat(np.array(scales, dtype=np.float64), sizes)
    occurrence_docs = np.repeat(np.array(owners, dtype=np.int64), sizes)
    # One key per (tool, term); a stable sort keeps each key's occurrences in field order.
    keys = occurrence_docs * max(len(vocabulary), 1) + term_ids
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else keys
    # np.add.at adds in array order, one element at a time, so each frequency is 0 + s1 + s2 + …
    # exactly as `doc_terms` adds it (reduceat may sum long runs pairwise: a last bit apart).
    group = np.cumsum(np.concatenate(([False], keys[1:] != keys[:-1]))) if len(keys) else keys
    frequencies = np.zeros(len(starts), dtype=np.float64)
    np.add.at(frequencies, group, occurrence_scales[order])
    weights = frequencies * (K1 + 1.0) / (frequencies + K1)
    first = keys[starts] if len(keys) else keys
    width = max(len(vocabulary), 1)
    lengths = np.bincount(first // width, minlength=len(docs)).astype(np.int64)
    return Built(vocabulary, first % width, weights, lengths, name_terms)
