"""The semantic side of search: one vector per tool, and a query's cosine with each of them.

Vectors sit in a float32 matrix by slot, so a query is one matrix-vector product (about 0.1 ms at
2,000 tools); a changed tool rewrites its row, a removed one is masked and its slot reused.
Computing a tool's vector (WordPiece in Python) is the slow part: `prepare` does it ahead, off the
event loop, into a cache that `upsert` then reads (and that can live on disk: `vector_cache`).

Two models (`proxy.semanticModel`): the static token vectors (`vectors`, the default) and the
sentence encoder (`encoder`, opt-in: 8–18 ms a text instead of microseconds). Each embeds its own
text of a tool and weighs its own in the fusion (`Model`); their caches never mix (`Model.key`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search import encoder, vectors
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.hybrid import ALPHA
from mcpmanager.core.search.vector_cache import VectorCache, digest
from mcpmanager.core.search.vectors import Vector

ModelName = Literal["static", "encoder"]


def doc_text(doc: SearchDoc) -> str:
    """What a tool's vector is made of: its name counts twice (it is short and says the most)."""
    params = " ".join(name for name, _ in doc.params)
    return f"{doc.name}. {doc.name}. {doc.title}. {doc.description} {params}"


def short_text(doc: SearchDoc) -> str:
    """What a tool's vector is made of for the encoder: its name and its description's first sentence.
    The encoder reads a sentence well; a whole manual pools into a vaguer vector (dev held-out hit@5
    .672 this way, docs/search.md), and a short text costs less to embed."""
    first = re.split(r"(?<=[.!?])\s+", doc.description.strip(), maxsplit=1)[0][:300]
    return f"{doc.name}. {first}"


class Embedder(Protocol):
    """Text → a unit vector: `vectors.TokenVectors` and `encoder.Encoder`."""

    @property
    def dims(self) -> int: ...

    def embed(self, text: str) -> Vector: ...

    def embed_many(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...

    def meaningful(self, text: str) -> bool: ...


@dataclass(frozen=True)
class Model:
    key: str  # what made the vectors: a cache holds one model's (`VectorCache.model`)
    load: Callable[[], Embedder]
    text: Callable[[SearchDoc], str]  # what of a tool is embedded
    alpha: float  # the semantic part's weight in the fusion (`hybrid.fuse`)
    inline: bool  # cheap enough to embed a tool on the event loop when `prepare` has not yet


MODELS: dict[ModelName, Model] = {
    "static": Model(vectors.MODEL, vectors.shipped, doc_text, ALPHA, inline=True),
    # Weight 1.0: the best of 0.3–1.0 on the dev set's tune half (docs/search.md).
    "encoder": Model(encoder.MODEL, encoder.shipped, short_text, 1.0, inline=False),
}


# Each model's cache file, in the cache folder: switching models back and forth recomputes nothing.
CACHE_FILES: dict[ModelName, str] = {"static": "search-vectors.npz", "encoder": "search-vectors-encoder.npz"}


def vector_cache(model: ModelName, path: Path | None = None) -> VectorCache:
    """A cache for `model`'s vectors (on disk at `path`, if given)."""
    return VectorCache(path, MODELS[model].key)


class SemanticIndex:
    """`model`: "static" or "encoder" (`MODELS`). `background`: tools' vectors are computed by
    `prepare` in a thread (the engine's vector job); a model too slow for the event loop then
    leaves a tool without its semantic part until its vector is ready, instead of computing it."""

    def __init__(
        self,
        vectors: Embedder | None = None,
        cache: VectorCache | None = None,
        model: ModelName = "static",
        background: bool = False,
    ) -> None:
        self.model = MODELS[model]
        self.alpha = self.model.alpha
        self._vectors = vectors
        self._defer = background and not self.model.inline
        self.cache = cache if cache is not None else VectorCache(model=self.model.key)  # (an empty one is falsy)
        self._pending: dict[str, bytes] = {}  # key → digest of its text, waiting for `prepare`
        self._slot_of: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._free: list[int] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)

    @property
    def vectors(self) -> Embedder:
        if self._vectors is None:
            self._vectors = self.model.load()
        return self._vectors

    def __len__(self) -> int:
        return len(self._slot_of)

    def key(self, slot: int) -> str | None:
        return self._keys[slot]

    def slot(self, key: str) -> int | None:
        """The tool's slot; None while its vector is pending (no semantic part, neither good nor bad)."""
        return None if key in self._pending else self._slot_of.get(key)

    # Vectors of tools ---------------------------------------------------------------------------

    def vector(self, doc: SearchDoc) -> Vector:
        text = self.model.text(doc)
        key = digest(text)
        found = self.cache.get(key)
        if found is None:
            found = self.vectors.embed(text)
            self.cache.put(key, found)
        return found

    def prepare(self, docs: Iterable[SearchDoc]) -> None:
        """Compute and cache the vectors of `docs` (run it in a thread when the catalogue changes),
        forgetting those of texts that are gone, and write the cache file if there is one."""
        self.cache.load()
        texts = {digest(text): text for text in map(self.model.text, docs)}
        self._compute(texts)
        self.cache.retain(set(texts))
        self.cache.save()

    def _compute(self, texts: dict[bytes, str]) -> None:
        """Embed the texts the cache lacks, a batch at a time (each batch is usable at once)."""
        missing = [(key, text) for key, text in texts.items() if self.cache.get(key) is None]
        missing.sort(key=lambda item: len(item[1]))  # batches of similar length: less padding
        for start in range(0, len(missing), encoder.BATCH):
            batch = missing[start : start + encoder.BATCH]
            for (key, _), vector in zip(batch, self.vectors.embed_many([t for _, t in batch]), strict=True):
                self.cache.put(key, vector)

    # Changing -----------------------------------------------------------------------------------

    def replace_all(self, docs: Iterable[SearchDoc]) -> None:
        self._slot_of.clear()
        self._keys.clear()
        self._free.clear()
        self._pending.clear()
        self._alive[:] = False
        docs = list(docs)
        if not self._defer:
            self._compute({digest(text): text for text in map(self.model.text, docs)})
        for doc in docs:
            self.upsert(doc)

    def upsert(self, doc: SearchDoc) -> None:
        self._pending.pop(doc.key, None)
        if self._defer and self.cache.get(text_key := digest(self.model.text(doc))) is None:
            self._pending[doc.key] = text_key
            vector = np.zeros(self.vectors.dims, dtype=np.float32)
        else:
            vector = self.vector(doc)
        slot = self._slot_of.get(doc.key)
        if slot is None:
            slot = self._free.pop() if self._free else len(self._keys)
            if slot == len(self._keys):
                self._keys.append(doc.key)
                self._grow(slot + 1, len(vector))
            else:
                self._keys[slot] = doc.key
            self._slot_of[doc.key] = slot
        self._matrix[slot] = vector
        self._alive[slot] = True

    def remove(self, key: str) -> None:
        self._pending.pop(key, None)
        slot = self._slot_of.pop(key, None)
        if slot is None:
            return
        self._keys[slot] = None
        self._alive[slot] = False
        self._matrix[slot] = 0.0
        self._free.append(slot)

    def _grow(self, rows: int, dims: int) -> None:
        if rows <= len(self._matrix) and self._matrix.shape[1] == dims:
            return
        size = max(rows, 2 * len(self._matrix), 64)
        matrix = np.zeros((size, dims), dtype=np.float32)
        alive = np.zeros(size, dtype=bool)
        if self._matrix.shape[1] == dims:
            matrix[: len(self._matrix)] = self._matrix
            alive[: len(self._alive)] = self._alive
        self._matrix, self._alive = matrix, alive

    # Querying -----------------------------------------------------------------------------------

    def similarities(self, query: str) -> npt.NDArray[np.float32]:
        """The cosine of `query` with every slot's tool (0 for empty slots), or nothing at all when
        the query has no meaningful token."""
        if not self._slot_of or not self.vectors.meaningful(query):
            return np.zeros(0, dtype=np.float32)
        if self._pending:
            self._fill_pending()
        vector = self.vectors.embed(query)
        if not vector.any():
            return np.zeros(0, dtype=np.float32)
        rows = len(self._keys)
        # einsum, not `@`: OpenBLAS runs a product this size on several threads, and on a busy machine
        # the wait for the second core cost 8 ms a query at 2,000 tools (p50), against 0.05 ms here.
        # Rounded: the same tool must score the same wherever it sits (ties, incremental updates).
        scores: npt.NDArray[np.float32] = np.round(np.einsum("ij,j->i", self._matrix[:rows], vector), 5)
        scores[~self._alive[:rows]] = 0.0
        return scores

    def _fill_pending(self) -> None:
        """Take the vectors `prepare` has computed since (a dictionary lookup per waiting tool)."""
        for key, text_key in list(self._pending.items()):
            vector = self.cache.get(text_key)
            if vector is not None:
                self._matrix[self._slot_of[key]] = vector
                del self._pending[key]
