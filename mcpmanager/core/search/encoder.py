"""all-MiniLM-L6-v2 itself, in numpy: text → the model's sentence vector (the opt-in semantic model).

The static vectors (`vectors`) give every token one meaning whatever its neighbours; the model reads
the whole text, so "return a buyer's payment" lands near a refund tool although `refund` is cut into
ref + ##und. It costs about 8 ms a query on one core instead of 0.05 ms, hence opt-in
(`proxy.semanticModel: "encoder"`; docs/search.md has the figures).

BERT as sentence-transformers runs it: word + position + token-type embeddings, LayerNorm, six
layers of 12-head self-attention and a GELU feed-forward (LayerNorm after each), then the mean of the
last hidden states over the text's tokens, normalised. Tokens come from the app's WordPiece, which
splits identifiers first (`createIssue`), as for the static vectors.

Weights (data/minilm-int8.npz, 26.4 MB; licence: data/NOTICE.md): each matrix int8 with a float32
scale per output row, except the feed-forward output matrices (float16: int8 there cost the most
agreement with the float32 model), LayerNorms and biases float32. Matrices are widened to float32
at load (BLAS has no int8 product); the word embeddings stay int8 and only a text's rows are widened.
Cosine with torch's float32 model ≥ .999 (tests/core/search/test_encoder.py).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

from mcpmanager.core.search.vectors import DATA, Vector, meaningful, trimmed
from mcpmanager.core.search.wordpiece import WordPiece

Matrix = npt.NDArray[np.float32]
# What made a tool's vector (VectorCache.model): never mixed with the static vectors' (bump on change).
MODEL = "all-MiniLM-L6-v2 numpy int8 mean-pooled v1"
WEIGHTS = "minilm-int8.npz"
BATCH = 32  # texts per forward pass when embedding tools: sorted by length, so little padding
_WORDS = "embeddings.word_embeddings.weight"
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model, [CLS] and [SEP] included


# One BLAS thread ---------------------------------------------------------------------------------
# OpenBLAS splits a product over every core and then waits for all of them: on a busy 2-core machine
# a query took 26 ms p50 and 724 ms p95 that way, 8-9 ms on one thread. The limit is process-wide
# (OpenBLAS has no per-thread setting), so it is counted: set by the first forward pass that starts,
# restored by the last one that ends, whichever threads (the event loop's query, the vector job) run them.

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit: Any = None
_controller: ThreadpoolController | None = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    global _blas_users, _blas_limit, _controller
    with _blas_lock:
        if _blas_users == 0:
            if _controller is None:
                from threadpoolctl import ThreadpoolController  # (not imported by the default model)

                _controller = ThreadpoolController()  # finds the loaded BLAS libraries (once: ~ms)
            _blas_limit = _controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


# The model -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    qkv: Matrix  # (hidden, 3·hidden): Q, K and V in one product, transposed (torch stores (out, in))
    qkv_bias: Matrix
    out: Matrix
    out_bias: Matrix
    norm1: tuple[Matrix, Matrix]
    up: Matrix
    up_bias: Matrix
    down: Matrix
    down_bias: Matrix
    norm2: tuple[Matrix, Matrix]


def _gelu(x: Matrix) -> Matrix:
    """BERT's exact GELU, x·Φ(x), with erf from Abramowitz & Stegun 7.1.26 (error < 1.5e-7): numpy
    has no erf, and the tanh approximation moved the vectors more than the int8 weights do."""
    z = np.abs(x) * np.float32(1.0 / math.sqrt(2.0))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    out: Matrix = (0.5 * x * (1.0 + np.where(x < 0, -erf, erf))).astype(np.float32, copy=False)
    return out


def _layer_norm(x: Matrix, norm: tuple[Matrix, Matrix]) -> Matrix:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    out: Matrix = centred / np.sqrt(variance + _EPS) * norm[0] + norm[1]
    return out


class Encoder:
    """The same interface as `TokenVectors` (`embed`, `embed_many`, `dims`, `meaningful`)."""

    def __init__(self, weights: Mapping[str, npt.NDArray[Any]], vocab: Sequence[str]) -> None:
        def matrix(name: str) -> Matrix:
            if name + ".q" in weights:  # int8 by row, with each row's scale
                return weights[name + ".q"].astype(np.float32) * weights[name + ".s"].astype(np.float32)[:, None]
            return np.asarray(weights[name], dtype=np.float32)

        def transposed(name: str) -> Matrix:
            return np.ascontiguousarray(matrix(name).T)

        def norm(name: str) -> tuple[Matrix, Matrix]:
            return matrix(name + ".weight"), matrix(name + ".bias")

        self.wordpiece = WordPiece(vocab)
        self.cls, self.sep = self.wordpiece.vocab["[CLS]"], self.wordpiece.vocab["[SEP]"]
        self.words = weights[_WORDS + ".q"]  # int8: 11.7 MB instead of 47; a text widens its rows
        self.word_scales = weights[_WORDS + ".s"].astype(np.float32)
        self.position = matrix("embeddings.position_embeddings.weight")
        self.token_type = matrix("embeddings.token_type_embeddings.weight")[0]  # one segment only
        self.embedding_norm = norm("embeddings.LayerNorm")
        self.layers: list[_Layer] = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            a = p + "attention.self."
            qkv = np.concatenate([matrix(a + f"{part}.weight") for part in ("query", "key", "value")])
            self.layers.append(
                _Layer(
                    qkv=np.ascontiguousarray(qkv.T),
                    qkv_bias=np.concatenate([matrix(a + f"{part}.bias") for part in ("query", "key", "value")]),
                    out=transposed(p + "attention.output.dense.weight"),
                    out_bias=matrix(p + "attention.output.dense.bias"),
                    norm1=norm(p + "attention.output.LayerNorm"),
                    up=transposed(p + "intermediate.dense.weight"),
                    up_bias=matrix(p + "intermediate.dense.bias"),
                    down=transposed(p + "output.dense.weight"),
                    down_bias=matrix(p + "output.dense.bias"),
                    norm2=norm(p + "output.LayerNorm"),
                )
            )

    @property
    def dims(self) -> int:
        return int(self.position.shape[1])

    def ids(self, text: str) -> list[int]:
        """[CLS] + the text's WordPiece ids, cut to fit + [SEP]; only [CLS] when it has no token."""
        body = self.wordpiece.ids(trimmed(text))[: _MAX_TOKENS - 2]
        return [self.cls, *body, self.sep] if body else [self.cls]

    def embed(self, text: str) -> Vector:
        """The unit vector of `text`; zeros when it has no token."""
        vector: Vector = self.embed_many([text])[0]
        return vector

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        """The unit vectors of `texts`, in order, BATCH texts of similar length a forward pass."""
        tokenised = [self.ids(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(tokenised[i]))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        with one_blas_thread():
            for start in range(0, len(order), BATCH):
                chunk = [i for i in order[start : start + BATCH] if len(tokenised[i]) > 1]
                if chunk:
                    out[chunk] = self._forward([tokenised[i] for i in chunk])
        return out

    def meaningful(self, text: str) -> bool:
        return meaningful(self.wordpiece, text)

    def _forward(self, batch: Sequence[Sequence[int]]) -> Matrix:
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        words = self.words[ids].astype(np.float32) * self.word_scales[ids][..., None]
        x = _layer_norm(words + self.position[:width] + self.token_type, self.embedding_norm)
        n, t, h = x.shape
        dim = h // _HEADS
        padding = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # no attention to padding
        scale = np.float32(1.0 / math.sqrt(dim))
        flat = x.reshape(n * t, h)
        for layer in self.layers:
            proj = (flat @ layer.qkv + layer.qkv_bias).reshape(n, t, 3, _HEADS, dim).transpose(2, 0, 3, 1, 4)
            q, k, v = proj[0], proj[1], proj[2]  # (n, heads, t, dim)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + padding
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * t, h)
            flat = _layer_norm(flat + context @ layer.out + layer.out_bias, layer.norm1)
            hidden = _gelu(flat @ layer.up + layer.up_bias)
            flat = _layer_norm(flat + hidden @ layer.down + layer.down_bias, layer.norm2)
        pooled = (flat.reshape(n, t, h) * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        out: Matrix = (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)
        return out


@lru_cache(maxsize=1)
def shipped() -> Encoder:
    """The model shipped with the package, loaded once per process (about 0.2 s, 70 MB in memory)."""
    folder = resources.files(DATA)
    vocab = folder.joinpath("vocab.txt").read_text(encoding="utf-8").splitlines()
    with folder.joinpath(WEIGHTS).open("rb") as handle, np.load(handle) as data:
        weights = {name: data[name] for name in data.files}
    return Encoder(weights, vocab)
