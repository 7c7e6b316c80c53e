"""Static token vectors distilled from all-MiniLM-L6-v2: text → a unit vector, with numpy alone.

`scripts/distill_vectors.py` ran every token of the model's vocabulary through the model once and
kept its mean-pooled output, reduced by PCA (data/vectors.npy, float16; licence: data/NOTICE.md).
A text's vector is the weighted mean of its tokens' vectors, normalised: the model2vec idea. It
puts "sprinkle the lawn" near a tool that turns on the garden irrigation and "put on some tunes"
near one that plays a song, which BM25F cannot, at microseconds per text and with no download.
(A word the vocabulary cuts into pieces has only its pieces' meaning: `refund` is ref + ##und.)

Weights: a token's rank in the vocabulary, which BERT's WordPiece training ordered by frequency,
stands in for its frequency (Zipf), and rarer tokens weigh more (log of the rank), as SIF weighting
does; stop words, punctuation and special tokens weigh nothing. The weights depend on the token
alone, not on the catalogue, so a tool's vector never changes when other tools do (and can be
cached by its text).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.stopwords import STOP_WORDS
from mcpmanager.core.search.wordpiece import WordPiece

Vector = npt.NDArray[np.float32]
DATA = "mcpmanager.core.search.data"
# What made a tool's vector: a cache made by other vectors or weights is not used (bump on change).
MODEL = "all-MiniLM-L6-v2 static 256 zipf50 v1"
_FIRST_WORD = 1996  # BERT's vocabulary: special tokens and single characters come first, then "the"
_ZIPF_SCALE = 50.0  # ranks this far apart change the weight by about log(2)
# A query is text a model wrote, a tool's text says the most first: past these, a pasted blob or a
# long manual adds nothing but time (WordPiece in Python costs about 1 µs a character).
_MAX_CHARS = 4000
_MAX_TOKENS = 256
_MAX_CHUNK = 80  # a whitespace-free run this long is data (base64, a hash), as for the analyzer
_MEANINGFUL_PIECE = 4  # a word's first piece this long, and half of it, carries the word's meaning


class TokenVectors:
    def __init__(self, vocab: list[str], matrix: npt.NDArray[np.floating]) -> None:
        if len(vocab) != len(matrix):
            raise ValueError(f"{len(vocab)} tokens but {len(matrix)} vectors")
        self.wordpiece = WordPiece(vocab)
        # Kept as shipped (float16: half the memory); the few rows a text needs are widened to add.
        self.matrix: npt.NDArray[np.floating] = np.ascontiguousarray(matrix)
        rank = np.arange(len(vocab), dtype=np.float64) - _FIRST_WORD
        weights = np.log1p(np.maximum(rank, 1.0) / _ZIPF_SCALE)
        for token, index in self.wordpiece.vocab.items():
            if token.startswith("[") or token in STOP_WORDS or (len(token) == 1 and not token.isalnum()):
                weights[index] = 0.0
        self.weights: npt.NDArray[np.float32] = weights.astype(np.float32)

    @property
    def dims(self) -> int:
        return int(self.matrix.shape[1])

    def embed(self, text: str) -> Vector:
        """The unit vector of `text`; zeros when it has no meaningful token."""
        ids = np.asarray(self.wordpiece.ids(trimmed(text))[:_MAX_TOKENS], dtype=np.int64)
        ids = ids[ids >= 0]
        if not len(ids):
            return np.zeros(self.dims, dtype=np.float32)
        # einsum, not `@`: no BLAS threads for a small product (see SemanticIndex.similarities).
        vector: Vector = np.einsum("i,ij->j", self.weights[ids], self.matrix[ids].astype(np.float32))
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def embed_many(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors of `texts`, in order (one by one: each costs microseconds)."""
        return np.stack([self.embed(text) for text in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def meaningful(self, text: str) -> bool:
        return meaningful(self.wordpiece, text)


def trimmed(text: str) -> str:
    """What of `text` a model reads: its first _MAX_CHARS characters, without data-like runs."""
    return " ".join(chunk for chunk in text[:_MAX_CHARS].split() if len(chunk) <= _MAX_CHUNK)


def meaningful(wordpiece: WordPiece, text: str) -> bool:
    """Whether some word of `text` is a word the vocabulary knows: whole, or cut only at its
    end (`invoices` is invoice + ##s). A text of words cut into fragments (`zxqv` is z ##x ##q
    ##v, `asdf` as ##df) has only the fragments' vectors, which fall near whatever tool has
    odd fragments of its own (`d1_query`, `chroma_cqt`): such a text means nothing here."""
    for word in wordpiece.words(text[:_MAX_CHARS]):
        if not word.isalpha() or word in STOP_WORDS:
            continue
        ids = wordpiece.word_ids(word)
        if ids and ids[0] >= 0:
            first = wordpiece.token(ids[0])
            if len(ids) == 1 or (len(first) >= _MEANINGFUL_PIECE and 2 * len(first) >= len(word)):
                return True
    return False


@lru_cache(maxsize=1)
def shipped() -> TokenVectors:
    """The vectors shipped with the package, loaded once per process (about 0.05 s, 16 MB)."""
    folder = resources.files(DATA)
    vocab = folder.joinpath("vocab.txt").read_text(encoding="utf-8").splitlines()
    with folder.joinpath("vectors.npy").open("rb") as handle:
        matrix = np.load(handle)
    return TokenVectors(vocab, matrix)
