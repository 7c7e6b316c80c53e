"""Ranked search over the tool catalogue: BM25F, synonyms, a name bonus and a score floor.

A query's words are weighted by their rarity (BM25 idf) and matched against every field of a tool
with per-field weights (`fields`); word pairs add phrase and compound matches and synonyms the
catalogue's usual alternatives, at lower weights (`query`). Two multipliers follow: coordination
(a tool having more of the query's words wins over one having a single word many times) and the
share of the tool's NAME the query covers (among the tools of one server, `*_get` vs `*_list`,
the name is what tells them apart).

Only tools sharing a term with the query are scored, from an inverted index that takes updates
in place (`postings`): a query costs well under a millisecond at 2,000 tools, and a server's
changed tools are re-indexed alone. (rank-bm25 scores in Python per document and has neither
field weights nor updates: `get_batch_scores` over the candidates took 6.6 ms at 20,000 tools.)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.bulk_terms import bulk_terms
from mcpmanager.core.search.document import Hit, SearchDoc
from mcpmanager.core.search.fields import K1, doc_terms
from mcpmanager.core.search.hybrid import fuse
from mcpmanager.core.search.postings import Postings, idf
from mcpmanager.core.search.query import build_query
from mcpmanager.core.search.semantic import SemanticIndex
from mcpmanager.core.search.synonyms import SynonymMap

__all__ = ["Hit", "SearchDoc", "SearchIndex"]

COORD = 0.5  # the score grows by up to this share for a tool having all the query's words
NAME_BONUS = 0.5  # ... and by up to this share again when the query covers the tool's whole name
FLOOR = 0.02  # see SearchIndex.search
DEPTH = 50  # each side's candidates for the fusion with the semantic ranking (more when asked for more)
# At most this many candidates are re-ranked with the name bonus (the best by base score); only
# those the bonus could lift into the results are taken, so the cap only matters for flat scores.
_RERANK = 1000


@dataclass(frozen=True)
class _Entry:
    doc: SearchDoc
    name_terms: tuple[str, ...]


class SearchIndex:
    """`semantic`: fuse with the static-vector ranking (`hybrid`); True makes one with the shipped
    vectors and an in-memory cache, False or None searches with BM25F alone."""

    def __init__(
        self, synonyms: Mapping[str, Sequence[str]] | None = None, semantic: SemanticIndex | bool | None = True
    ) -> None:
        self._synonyms = SynonymMap(synonyms)
        self._postings = Postings()
        self._entries: dict[str, _Entry] = {}
        self.semantic: SemanticIndex | None = None
        if semantic is True:
            self.semantic = SemanticIndex()
        elif isinstance(semantic, SemanticIndex):  # (an empty one is falsy: not `semantic or None`)
            self.semantic = semantic

    def __len__(self) -> int:
        return len(self._entries)

    # Changing -------------------------------------------------------------------------------------

    def replace_all(self, docs: Iterable[SearchDoc]) -> None:
        self._postings.clear()
        self._entries.clear()
        latest: dict[str, SearchDoc] = {}
        for doc in docs:  # a key given twice: the last one, in its place, as upserts would leave it
            latest.pop(doc.key, None)
            latest[doc.key] = doc
        docs = list(latest.values())
        built = bulk_terms(docs)
        for doc, name_terms in zip(docs, built.name_terms, strict=True):
            self._entries[doc.key] = _Entry(doc, name_terms)
        self._postings.load_runs(list(latest), built.vocabulary, built.term_ids, built.weights, built.lengths)
        if self.semantic is not None:
            self.semantic.replace_all(docs)

    def upsert(self, doc: SearchDoc) -> None:
        """Add a tool or replace the one with its key (a server's tools changed)."""
        self._add(doc)
        if self.semantic is not None:
            self.semantic.upsert(doc)

    def remove(self, key: str) -> None:
        self._entries.pop(key, None)
        self._postings.remove(key)
        if self.semantic is not None:
            self.semantic.remove(key)

    def _add(self, doc: SearchDoc) -> None:
        terms = doc_terms(doc)
        self._postings.add(doc.key, terms.weights)
        self._entries[doc.key] = _Entry(doc, terms.name_terms)

    # Searching ------------------------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """The best `limit` tools for `query`, best first: BM25F's ranking fused with the semantic
        one (`hybrid`) when there is one."""
        semantic = self.semantic
        if semantic is None or limit <= 0 or not self._entries:
            return self.lexical(query, limit)
        depth = max(limit, DEPTH)
        hits = self.lexical(query, depth)
        return fuse(hits, semantic.similarities(query), semantic.slot, semantic.key, limit, depth, semantic.alpha)

    def lexical(self, query: str, limit: int = 5) -> list[Hit]:
        """BM25F's best `limit` tools for `query`, best first; equal scores by exposed name.

        The floor: the best base score a query could reach is that of a tool having each of the
        query's own words (known to the index or not) as often as saturation allows, the sum of
        their idf·(k1+1). A tool scoring under FLOOR times that matched too little of the query to be
        meant (one common word of a long request), so it is not returned; a query made of words
        no tool has returns nothing.
        """
        if limit <= 0 or not self._entries:
            return []
        parsed = build_query(query, self._synonyms)
        if not parsed.own:
            return []
        weights, own = parsed.weights, parsed.own
        postings = self._postings
        if postings.needs_compaction():
            postings.compact()
        count = len(postings)
        idfs = {term: idf(postings.df(term), count) for term in weights}
        scores = np.zeros(postings.slots, dtype=np.float64)
        cover = np.zeros(postings.slots, dtype=np.float64)
        for term, weight in weights.items():
            postings.accumulate(scores, term, weight * idfs[term])
        for term, weight in own.items():
            postings.presence(cover, term, weight * idfs[term])
        # Coordination: of two tools with the same BM25 score, the one with more of the query's
        # (rarer) words is the better guess.
        own_weight = sum(weight * idfs[term] for term, weight in own.items())
        scores *= 1.0 + COORD * cover / own_weight
        scores[~postings.alive()] = 0.0
        floor = FLOOR * (K1 + 1.0) * own_weight
        return self._rank(scores, weights, idfs, floor, limit)

    def _rank(
        self,
        scores: npt.NDArray[np.float64],
        weights: Mapping[str, float],
        idfs: Mapping[str, float],
        floor: float,
        limit: int,
    ) -> list[Hit]:
        # The bonus multiplies by at most (1 + NAME_BONUS): a tool whose score times that stays
        # below the limit-th best score (or the floor) cannot make the results.
        matched = np.flatnonzero(scores)
        if len(matched) > limit:
            kth = float(np.partition(scores[matched], len(matched) - limit)[len(matched) - limit])
            floor_reach = max(floor, kth)
        else:
            floor_reach = floor
        candidates = matched[scores[matched] * (1.0 + NAME_BONUS) >= floor_reach]
        if len(candidates) > _RERANK:
            candidates = candidates[np.argpartition(-scores[candidates], _RERANK - 1)[:_RERANK]]
        ranked: list[tuple[float, str, str]] = []
        idfs = dict(idfs)
        count = len(self._postings)
        for slot in candidates.tolist():
            key = self._postings.key(slot)
            assert key is not None
            entry = self._entries[key]
            for term in entry.name_terms:
                if term not in idfs:
                    idfs[term] = idf(self._postings.df(term), count)
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
