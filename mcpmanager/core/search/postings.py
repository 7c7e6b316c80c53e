"""The inverted index: term → the documents that have it and their weight, kept up to date cheaply.

Built like a search engine's segments: a compact main segment (numpy arrays, one run per term) plus
a small pending part for documents added since it was built; removed documents are masked out until
the next compaction. So an update touches only the changed documents, a query reads only the
documents that share a term with it, and memory stays near 24 bytes per (term, document) pair
(the posting, and the document's own list of terms to undo it).
Compaction happens when the pending part or the removed documents exceed a quarter of the index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.sorting import stable_sort

FloatArray = npt.NDArray[np.float64]
_MIN_SLACK = 64  # below this many changes, never compact


def idf(df: int, count: int) -> float:
    """Inverse document frequency, the always-positive BM25 form."""
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


class Postings:
    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._ids: dict[str, int] = {}
        self._df: list[int] = []
        self._slot_of: dict[str, int] = {}
        self._keys: list[str | None] = []  # slot → key; None once removed
        self._forward: list[tuple[npt.NDArray[np.int32], FloatArray] | None] = []
        self._alive = np.zeros(0, dtype=bool)
        # The main segment: the postings of term id t are _slots/_values[_ptr[t]:_ptr[t + 1]].
        self._ptr = np.zeros(1, dtype=np.int64)
        self._slots = np.zeros(0, dtype=np.int32)
        self._values = np.zeros(0, dtype=np.float64)
        self._main_docs = 0
        self._pending: dict[int, tuple[list[int], list[float]]] = {}
        self._pending_docs = 0
        self._dead = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, key: object) -> bool:
        return key in self._slot_of

    @property
    def slots(self) -> int:
        """The size of a score array for `accumulate`."""
        return len(self._keys)

    def key(self, slot: int) -> str | None:
        return self._keys[slot]

    def df(self, term: str) -> int:
        term_id = self._ids.get(term)
        return 0 if term_id is None else self._df[term_id]

    # Changing ---------------------------------------------------------------------------------

    def add(self, key: str, weights: Mapping[str, float], *, bulk: bool = False) -> None:
        """Index `key` (replacing its old entry). `bulk`: a compaction follows before any search, so
        the pending postings need not be kept."""
        if key in self._slot_of:
            self.remove(key)
        slot = len(self._keys)
        term_ids = [self._term_id(t) for t in weights]
        for term_id in term_ids:
            self._df[term_id] += 1
        if not bulk:
            for term_id, value in zip(term_ids, weights.values(), strict=True):
                slots, vals = self._pending.setdefault(term_id, ([], []))
                slots.append(slot)
                vals.append(value)
        ids = np.array(term_ids, dtype=np.int32)
        values = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
        self._keys.append(key)
        self._forward.append((ids, values))
        self._slot_of[key] = slot
        if slot >= len(self._alive):
            grown = np.zeros(max(slot + 1, 2 * len(self._alive)), dtype=bool)
            self._alive = np.concatenate([self._alive, grown])
        self._alive[slot] = True
        self._pending_docs += 1

    def remove(self, key: str) -> None:
        slot = self._slot_of.pop(key, None)
        if slot is None:
            return
        forward = self._forward[slot]
        assert forward is not None
        for term_id in forward[0].tolist():
            self._df[term_id] -= 1
        self._keys[slot] = None
        self._forward[slot] = None
        self._alive[slot] = False
        self._dead += 1

    def _term_id(self, term: str) -> int:
        term_id = self._ids.get(term)
        if term_id is None:
            term_id = self._ids[term] = len(self._df)
            self._df.append(0)
        return term_id

    def load(self, entries: Iterable[tuple[str, Mapping[str, float]]]) -> None:
        """Replace everything by `entries`: the index that adding each and compacting would give, in
        one pass (a rebuild of 20,000 tools made 40,000 small arrays on the way, then joined them)."""
        latest: dict[str, Mapping[str, float]] = {}
        for key, weights in entries:  # a key given twice: the last one, in its place, as add() does
            latest.pop(key, None)
            latest[key] = weights
        vocabulary: dict[str, int] = {}
        flat_ids: list[int] = []
        flat_values: list[float] = []
        lengths: list[int] = []
        for weights in latest.values():
            flat_ids.extend(vocabulary.setdefault(term, len(vocabulary)) for term in weights)
            flat_values.extend(weights.values())
            lengths.append(len(weights))
        ids, values = np.array(flat_ids, dtype=np.int64), np.array(flat_values, dtype=np.float64)
        self.load_runs(list(latest), list(vocabulary), ids, values, np.array(lengths, dtype=np.int64))

    def load_runs(
        self,
        keys: list[str],
        vocabulary: list[str],
        term_ids: npt.NDArray[np.int64],
        values: FloatArray,
        lengths: npt.NDArray[np.int64],
    ) -> None:
        """Replace everything by `keys` (distinct), document i having the terms
        `vocabulary[term_ids[start:start + lengths[i]]]` with their `values`."""
        self.clear()
        df = np.bincount(term_ids, minlength=len(vocabulary))
        used = np.flatnonzero(df)  # terms no document has are not kept
        renumber = np.full(len(vocabulary), -1, dtype=np.int32)
        renumber[used] = np.arange(len(used), dtype=np.int32)
        new_ids = renumber[term_ids]
        self._ids = {vocabulary[t]: i for i, t in enumerate(used.tolist())}
        self._df = df[used].tolist()
        sizes = lengths.tolist()
        self._index(new_ids, values, sizes, len(used))
        self._forward = []
        start = 0
        for length in sizes:
            self._forward.append((new_ids[start : start + length], values[start : start + length]))
            start += length
        self._keys = list[str | None](keys)
        self._slot_of = {k: i for i, k in enumerate(keys)}
        self._alive = np.ones(len(keys), dtype=bool)
        self._main_docs = len(keys)

    def _index(self, term_ids: npt.NDArray[np.int32], values: FloatArray, lengths: list[int], terms: int) -> None:
        """The main segment from every live document's terms, in slot order."""
        doc_slots = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
        _, order = stable_sort(term_ids, terms)
        self._slots, self._values = doc_slots[order], values[order]
        counts = np.bincount(term_ids, minlength=terms)
        self._ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    # Compaction -------------------------------------------------------------------------------

    def needs_compaction(self) -> bool:
        slack = _MIN_SLACK + self._main_docs // 4
        return self._pending_docs > slack or self._dead > slack

    def compact(self) -> None:
        """Rebuild the main segment from the live documents, renumbering slots and terms."""
        keys = [k for k in self._keys if k is not None]
        forwards = [f for f in self._forward if f is not None]
        old_ids = np.concatenate([f[0] for f in forwards]) if forwards else np.zeros(0, dtype=np.int32)
        # Terms no live document has any more are dropped; the others are numbered anew.
        used = np.flatnonzero(np.bincount(old_ids, minlength=len(self._df)))
        renumber = np.full(len(self._df), -1, dtype=np.int32)
        renumber[used] = np.arange(len(used), dtype=np.int32)
        new_ids = renumber[old_ids]
        terms = list(self._ids)
        self._ids = {terms[t]: i for i, t in enumerate(used.tolist())}
        self._df = [self._df[t] for t in used.tolist()]
        lengths = [len(f[0]) for f in forwards]
        values = np.concatenate([f[1] for f in forwards]) if forwards else np.zeros(0, dtype=np.float64)
        self._index(new_ids, values, lengths, len(used))
        self._forward = []
        start = 0
        for (_, vals), length in zip(forwards, lengths, strict=True):
            self._forward.append((new_ids[start : start + length], vals))
            start += length
        self._keys = list(keys)
        self._slot_of = {k: i for i, k in enumerate(keys)}
        self._alive = np.ones(len(keys), dtype=bool)
        self._main_docs = len(keys)
        self._pending, self._pending_docs, self._dead = {}, 0, 0

    # Querying ---------------------------------------------------------------------------------

    def accumulate(self, scores: FloatArray, term: str, factor: float) -> None:
        """scores[slot] += factor · weight, for every document that has `term` (removed ones too:
        `alive` masks them)."""
        term_id = self._ids.get(term)
        if term_id is None:
            return
        if term_id + 1 < len(self._ptr):
            start, end = self._ptr[term_id], self._ptr[term_id + 1]
            scores[self._slots[start:end]] += factor * self._values[start:end]
        pending = self._pending.get(term_id)
        if pending:
            scores[np.asarray(pending[0], dtype=np.int64)] += factor * np.asarray(pending[1])

    def presence(self, scores: FloatArray, term: str, factor: float) -> None:
        """scores[slot] += factor, for every document that has `term`."""
        term_id = self._ids.get(term)
        if term_id is None:
            return
        if term_id + 1 < len(self._ptr):
            scores[self._slots[self._ptr[term_id] : self._ptr[term_id + 1]]] += factor
        pending = self._pending.get(term_id)
        if pending:
            scores[np.asarray(pending[0], dtype=np.int64)] += factor

    def alive(self) -> npt.NDArray[np.bool_]:
        return self._alive[: len(self._keys)]
