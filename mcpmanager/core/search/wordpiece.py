"""BERT's uncased WordPiece tokenizer in pure Python: text → ids of all-MiniLM-L6-v2's vocabulary.

The static vectors (`vectors`) are indexed by these ids, so the split must be the model's own:
lowercase, accents dropped, punctuation and CJK characters apart, then each word greedily cut into
the longest vocabulary pieces from the left (`##` marks a piece inside a word). A word with no split
is [UNK], which carries no meaning and is dropped. Identifiers are split first (`createIssue`,
`get_pull_request` → words), since tool names are mostly identifiers the model never saw whole.
(The `tokenizers` wheel would do the same in Rust; words are cached here, so it would not pay.)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from mcpmanager.core.search.identifiers import CAMEL, singular_acronyms

_MAX_WORD = 100  # BERT's limit: a longer word is [UNK]
_MAX_PIECES = 16  # a word cut into more pieces than this is data (a hash, base64): dropped


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


class WordPiece:
    def __init__(self, vocab: Iterable[str]) -> None:
        self.vocab: dict[str, int] = {token: i for i, token in enumerate(vocab)}
        self.unknown = self.vocab.get("[UNK]", -1)
        self.word_ids = lru_cache(maxsize=65536)(self._word_ids)
        self._tokens: list[str] | None = None

    def words(self, text: str, identifiers: bool = True) -> list[str]:
        """BERT's basic tokenizer, after splitting identifiers (unless told not to: BERT's own way)."""
        if identifiers:
            text = CAMEL.sub(" ", singular_acronyms(text)).replace("_", " ")
        text = text.lower()
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        out: list[str] = []
        for chunk in text.split():
            word: list[str] = []
            for char in chunk:
                if _is_punctuation(char) or _is_cjk(char):
                    if word:
                        out.append("".join(word))
                        word = []
                    out.append(char)
                elif unicodedata.category(char) not in ("Cc", "Cf") and ord(char) not in (0, 0xFFFD):
                    word.append(char)
            if word:
                out.append("".join(word))
        return out

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > _MAX_WORD:
            return (self.unknown,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                token = self.vocab.get(piece)
                if token is not None:
                    ids.append(token)
                    break
                end -= 1
            else:
                return (self.unknown,)  # no piece fits: the whole word is unknown
            if len(ids) > _MAX_PIECES:
                return (self.unknown,)
            start = end
        return tuple(ids)

    def token(self, index: int) -> str:
        """The token of an id (the vocabulary read backwards, built on first use)."""
        if self._tokens is None:
            self._tokens = sorted(self.vocab, key=self.vocab.__getitem__)
        return self._tokens[index]

    def ids(self, text: str, identifiers: bool = True) -> list[int]:
        """The token ids of `text`, [UNK] included (the caller drops what carries no meaning)."""
        return [token for word in self.words(text, identifiers) for token in self.word_ids(word)]
