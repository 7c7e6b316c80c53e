"""Ranked search over the tool catalogue: BM25F with synonyms, a name bonus and a score floor.

A query's words are weighted by their rarity (BM25 idf) and matched against every field of a tool
(`fields`); joined word pairs add a phrase/compound match; synonyms add the catalogue's usual
alternatives at a lower weight. The base score is then raised by the share of the tool's NAME the
query covers: among the tools of one server (`*_get` vs `*_list`), the name is what tells them apart.

Only documents that share a term with the query are scored (`postings`), so a query costs
about the same with 200 or 20,000 tools.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mcpmanager.core.search.analyzer import analyze_query
from mcpmanager.core.search.document import Hit, SearchDoc
from mcpmanager.core.search.fields import K1, doc_terms
from mcpmanager.core.search.postings import Postings, idf
from mcpmanager.core.search.synonyms import SynonymMap

__all__ = ["Hit", "SearchDoc", "SearchIndex"]

PAIR_WEIGHT = 0.5  # a query's joined word pair, against one of its words
SYNONYM_WEIGHT = 0.4  # an expansion's word, against a word the user wrote
NAME_BONUS = 0.5  # the score grows by up to this share when the query covers the whole name
FLOOR = 0.02
COORD = 0.5  # see SearchIndex.search
# Candidates re-ranked with the name bonus: the best ones by base score. Only those within the
# bonus' reach of the top can move, so this bounds the work, not the result, in all but flat cases.
_RERANK = 400


@dataclass(frozen=True)
class _Entry:
    doc: SearchDoc
    name_terms: tuple[str, ...]


class SearchIndex:
    def __init__(self, synonyms: Mapping[str, Sequence[str]] | None = None) -> None:
        self._synonyms = SynonymMap(synonyms)
        self._postings = Postings()
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    # Changing -------------------------------------------------------------------------------------

    def replace_all(self, docs: Iterable[SearchDoc]) -> None:
        self._postings.clear()
        self._entries.clear()
        for doc in docs:
            self._add(doc, bulk=True)
        self._postings.compact()

    def upsert(self, doc: SearchDoc) -> None:
        """Add a tool or replace the one with its key (a server's tools changed)."""
        self._add(doc)

    def remove(self, key: str) -> None:
        self._entries.pop(key, None)
        self._postings.remove(key)

    def _add(self, doc: SearchDoc, bulk: bool = False) -> None:
        terms = doc_terms(doc)
        self._postings.add(doc.key, terms.weights, bulk=bulk)
        self._entries[doc.key] = _Entry(doc, terms.name_terms)

    # Searching ------------------------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """The best `limit` tools for `query`, best first; ties by exposed name.

        The floor: a query's best possible score is what a tool would get that had every query word
        (known to the index or not) as often as saturation allows, i.e. the sum of the words'
        idf·(k1+1). A tool scoring under FLOOR times that matched too little of the query to be
        meant (a shared common word, a stray synonym), so it is not returned; a query of unknown
        words returns nothing.
        """
        if limit <= 0 or not self._entries:
            return []
        weights = self._query_weights(query)
        if not weights:
            return []
        postings = self._postings
        if postings.needs_compaction():
            postings.compact()
        count = len(postings)
        idfs = {term: idf(postings.df(term), count) for term in weights}
        scores = np.zeros(postings.slots, dtype=np.float64)
        for term, weight in weights.items():
            postings.accumulate(scores, term, weight * idfs[term])
        if COORD:
            cover = np.zeros(postings.slots, dtype=np.float64)
            total = 0.0
            for term, weight in weights.items():
                if weight == 1.0:
                    postings.presence(cover, term, idfs[term])
                    total += idfs[term]
            scores *= 1.0 + COORD * cover / total
        scores[~postings.alive()] = 0.0
        best_possible = sum(idfs[t] * (K1 + 1.0) for t, w in weights.items() if w == 1.0)
        return self._rank(scores, weights, idfs, FLOOR * best_possible, limit)

    def _query_weights(self, query: str) -> dict[str, float]:
        analyzed = analyze_query(query)
        weights: dict[str, float] = dict.fromkeys(analyzed.words + analyzed.wholes, 1.0)
        for pair in analyzed.pairs:
            weights.setdefault(pair, PAIR_WEIGHT)
        for expansion in self._synonyms.expand(analyzed.words):
            for word in expansion.words:
                weights[word] = max(weights.get(word, 0.0), SYNONYM_WEIGHT)
            for pair in expansion.pairs:
                weights[pair] = max(weights.get(pair, 0.0), SYNONYM_WEIGHT * PAIR_WEIGHT)
        return weights

    def _rank(
        self,
        scores: np.ndarray,
        weights: Mapping[str, float],
        idfs: Mapping[str, float],
        floor: float,
        limit: int,
    ) -> list[Hit]:
        candidates = np.flatnonzero(scores * (1.0 + NAME_BONUS) >= max(floor, 1e-12))
        if len(candidates) > _RERANK:
            candidates = candidates[np.argpartition(-scores[candidates], _RERANK - 1)[:_RERANK]]
        ranked: list[tuple[float, str, str]] = []
        idfs = dict(idfs)
        for slot in candidates.tolist():
            key = self._postings.key(slot)
            assert key is not None
            entry = self._entries[key]
            for term in entry.name_terms:
                if term not in idfs:
                    idfs[term] = idf(self._postings.df(term), len(self._postings))
            score = float(scores[slot]) * (1.0 + NAME_BONUS * _coverage(entry.name_terms, weights, idfs))
            if score >= floor:
                ranked.append((-score, entry.doc.exposed, key))
        return [Hit(key, -negated) for negated, _, key in heapq.nsmallest(limit, ranked)]


def _coverage(name_terms: Sequence[str], weights: Mapping[str, float], idfs: Mapping[str, float]) -> float:
    """The idf-weighted share of the name's words the query has (a synonym counts at its weight)."""
    total = covered = 0.0
    for term in name_terms:
        total += idfs[term]
        covered += idfs[term] * weights.get(term, 0.0)
    return covered / total if total else 0.0
