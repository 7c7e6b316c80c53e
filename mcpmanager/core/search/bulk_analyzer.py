"""Every distinct text of a catalogue → its terms at once: what `analyze` gives each text, for a rebuild.

`analyze` costs tens of microseconds a text in Python, and a rebuild of 20,000 tools has some 40,000
distinct texts but only some 10,000 distinct tokens. So the texts are joined into one ASCII byte
string, cut into tokens by C string methods (long data runs blanked with numpy first, as `clean`
drops them), and each distinct token goes through `analyze`'s rules once: acronym plurals, camelCase
pieces and whole, stop words, stemming. Those rules see nothing past a token's edges (their
lookarounds only check for letters and digits), so a token's terms are the same wherever it stands.
What remains (which words stay, the word pairs, whether a pair stems as one of its text's own terms)
is numpy over ids. A character outside ASCII that is no word character (a dash, a curly quote, an
emoji) only separates words, so it is replaced by an ASCII one that does the same; texts with word
characters outside ASCII (accents, other scripts: `analyze`'s per-token path) or holding the
separator go through `analyze` itself. The tests compare every text with `analyze`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mcpmanager.core.search.analyzer import MAX_CHUNK, analyze, without_markup
from mcpmanager.core.search.fields import PHRASE
from mcpmanager.core.search.identifiers import CAMEL, WORD, singular_acronyms
from mcpmanager.core.search.sorting import stable_sort
from mcpmanager.core.search.stemmer import stem
from mcpmanager.core.search.stopwords import STOP_WORDS

IntArray = npt.NDArray[np.int64]
SEP = "\x1c"  # between joined texts: whitespace to `\s` and str.split, not a word character
_SEP = SEP.encode()
_OTHER = "\x7f"  # stands for a character outside ASCII that is neither a word character nor a space
# Bytes → 1 where `\s` (as the regexes read it) matches, else 0; and every byte that is no word
# character (SEP aside) → a space.
_SPACE_BYTES = bytes(bool(re.fullmatch(r"\s", chr(i))) for i in range(256))
_WORD_BYTES = bytes(i if i < 128 and (WORD.fullmatch(chr(i)) or chr(i) == SEP) else 32 for i in range(256))
# Past analyze's own cache: a rebuild's texts would only churn it (and evict what queries use).
_analyze = analyze.__wrapped__


@dataclass(frozen=True)
class Analyses:
    """Text i's terms are `terms[ids[starts[i]:starts[i + 1]]]`: its `words[i]` words, its `wholes[i]`
    camelCase wholes, then its phrase terms (PHRASE + pair), each part in `analyze`'s order."""

    terms: list[str]
    starts: IntArray
    ids: IntArray
    words: IntArray
    wholes: IntArray


class _Stream:
    """One part of the texts' terms (their words, wholes or phrases): (text, rank in the part, term id)."""

    def __init__(self) -> None:
        self.texts: list[IntArray] = []
        self.ranks: list[IntArray] = []
        self.terms: list[IntArray] = []

    def extend(self, texts: IntArray, terms: IntArray, ranks: IntArray | None = None) -> None:
        """`texts` in order (ranks are then counted within each text) unless `ranks` are given."""
        self.texts.append(texts)
        self.ranks.append(_ranks(texts) if ranks is None else ranks)
        self.terms.append(terms)


class _Vocabulary(dict[str, int]):
    def id(self, term: str) -> int:
        return self.setdefault(term, len(self))


def analyze_all(texts: Sequence[str]) -> Analyses:
    """The terms of each of `texts` (distinct, or the work is repeated)."""
    vocabulary = _Vocabulary()
    words, wholes, phrases = _Stream(), _Stream(), _Stream()
    plain = [_plain(text) for text in texts]
    which = [i for i, text in enumerate(plain) if text is not None]
    pairs = _joined([text for text in plain if text is not None], _array(which), vocabulary, words, wholes)
    _each_alone(texts, [i for i, text in enumerate(plain) if text is None], vocabulary, words, wholes, phrases)
    _phrases(pairs, vocabulary, words, wholes, phrases)
    return _assemble(len(texts), list(vocabulary), (words, wholes, phrases))


def _plain(text: str) -> str | None:
    """The text without markup, for the joined path: in ASCII, where a character outside it is no word
    character (a dash, a curly quote, an emoji: only a separator to `analyze`) and becomes an ASCII
    one that is no word character either, whitespace if it was. None: for `analyze` itself."""
    if SEP in text:
        return None
    text = without_markup(text)
    if text.isascii():
        return text
    table: dict[int, str] = {}
    for char in set(text):
        if not char.isascii():
            if WORD.match(char):
                return None  # accents, other scripts: the per-token path
            table[ord(char)] = " " if char.isspace() else _OTHER
    return text.translate(table)


# Word pairs before the check against their text's own terms: (text, left, right) as surface word
# ids, and the surface words.
_Pairs = tuple[IntArray, IntArray, IntArray, list[str]]


def _joined(plain: list[str], which: IntArray, vocabulary: _Vocabulary, words: _Stream, wholes: _Stream) -> _Pairs:
    """The words and wholes of texts[which], given `plain` (`_plain`), and their word pairs."""
    none = np.zeros(0, dtype=np.int64)
    if not len(which):
        return none, none, none, []
    # Spaced, the separator is a token of its own (spaces next to it change nothing: it is one).
    data = _without_long_runs(f" {SEP} ".join(plain).encode())
    tokens = data.translate(_WORD_BYTES).split()
    distinct = list(dict.fromkeys(tokens))
    number = dict(zip(distinct, range(len(distinct)), strict=True))
    ids = np.fromiter(map(number.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    ends = ids == number.get(_SEP, -1)
    owner = which[np.cumsum(ends)[~ends]]  # each token's text
    ids = ids[~ends]
    surface, starts, counts, pieces, whole = _pieces(b" ".join(distinct).decode(), vocabulary)
    token_wholes = whole[ids]
    found = token_wholes >= 0
    wholes.extend(owner[found], token_wholes[found])
    # Every token's pieces in order, and each piece's text; the words are those worth matching on.
    piece_ids = pieces[ranges(starts[ids], counts[ids])]
    owner_pieces = np.repeat(owner, counts[ids])
    add_term = vocabulary.setdefault
    stems = _array([add_term(stem(w), len(vocabulary)) if _is_content(w) else -1 for w in surface])
    kept = stems[piece_ids] >= 0
    piece_ids, owner_pieces = piece_ids[kept], owner_pieces[kept]
    words.extend(owner_pieces, stems[piece_ids])
    # Adjacent words of one text make a pair unless one is a number (for ASCII, nothing else bars it).
    digits = np.array([w.isdigit() for w in surface], dtype=bool)
    left, right = piece_ids[:-1], piece_ids[1:]
    pair = (owner_pieces[1:] == owner_pieces[:-1]) & ~digits[left] & ~digits[right]
    return owner_pieces[:-1][pair], left[pair], right[pair], surface


def _pieces(tokens: str, vocabulary: _Vocabulary) -> tuple[list[str], IntArray, IntArray, IntArray, IntArray]:
    """Each of the space-separated distinct `tokens`' pieces (lowercase words, as surface word ids: token
    i's are pieces[starts[i]:starts[i] + counts[i]]) and its whole (a term id, or -1), as `analyze`
    makes them; and the surface words."""
    originals = tokens.split(" ") if tokens else []
    lowered = tokens.lower().split(" ") if tokens else []
    count = len(lowered)
    counts = np.ones(count, dtype=np.int64)
    whole = np.full(count, -1, dtype=np.int64)
    more: list[str] = []  # the pieces of camelCase tokens, after one piece per token
    starts = np.arange(count, dtype=np.int64)
    # Only tokens with capitals (few) can hold an acronym plural or camelCase; the regexes go over them
    # joined by line breaks (to which they look as to a token's end) and split them with spaces.
    capitals = [i for i, (token, low) in enumerate(zip(originals, lowered, strict=True)) if token != low]
    joined = "\n".join([originals[i] for i in capitals])
    split_tokens = CAMEL.sub(" ", singular_acronyms(joined)).lower().split("\n") if capitals else []
    for i, split_token in zip(capitals, split_tokens, strict=True):
        split = split_token.split(" ")
        lowered[i] = split[0]
        if len(split) > 1:  # camelCase: its pieces, and itself whole
            starts[i], counts[i] = count + len(more), len(split)
            more.extend(split)
            if _is_content(low := "".join(split)):
                whole[i] = vocabulary.setdefault(stem(low), len(vocabulary))
    surface: dict[str, int] = {}
    add = surface.setdefault
    pieces = _array([add(w, len(surface)) for w in lowered + more])
    return list(surface), starts, counts, pieces, whole


def _without_long_runs(data: bytes) -> bytes:
    """`clean`'s removal of runs of over MAX_CHUNK non-space characters, over all texts at once."""
    space = np.frombuffer(data.translate(_SPACE_BYTES), dtype=bool)
    edges = np.flatnonzero(np.diff(space, prepend=True, append=True))  # where each run starts, then ends
    starts, ends = edges[0::2], edges[1::2]
    long = np.flatnonzero(ends - starts > MAX_CHUNK)
    if not len(long):
        return data
    blanked = bytearray(data)
    for start, end in zip(starts[long].tolist(), ends[long].tolist(), strict=True):
        blanked[start:end] = b" " * (end - start)
    return bytes(blanked)


def ranges(starts: IntArray, sizes: IntArray) -> IntArray:
    """The positions starts[0] … starts[0] + sizes[0] - 1, then those from starts[1], and so on."""
    ends = np.cumsum(sizes)
    return np.repeat(starts - ends + sizes, sizes) + np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)


def _is_content(word: str) -> bool:
    # As analyze's: one letter is never a word worth matching on; digits are.
    return word not in STOP_WORDS and (len(word) > 1 or word.isdigit())


def _each_alone(
    texts: Sequence[str], which: list[int], vocabulary: _Vocabulary, words: _Stream, wholes: _Stream, phrases: _Stream
) -> None:
    """Texts for `analyze` itself (its pairs are checked already)."""
    rows: tuple[list[list[int]], ...] = tuple([[], [], []] for _ in range(3))  # (texts, ranks, ids) per part
    for i in which:
        analyzed = _analyze(texts[i])
        for row, terms in zip(
            rows, (analyzed.words, analyzed.wholes, [PHRASE + p for p in analyzed.pairs]), strict=True
        ):
            row[0].extend([i] * len(terms))
            row[1].extend(range(len(terms)))
            row[2].extend(vocabulary.id(t) for t in terms)
    for (owners, ranks, ids), stream in zip(rows, (words, wholes, phrases), strict=True):
        if ids:
            stream.extend(_array(owners), _array(ids), _array(ranks))


def _phrases(pairs: _Pairs, vocabulary: _Vocabulary, words: _Stream, wholes: _Stream, phrases: _Stream) -> None:
    """The word pairs' phrase terms, but for a pair that stems as one of its text's words or wholes."""
    owner, left, right, surface = pairs
    if not len(owner):
        return
    size = len(surface)
    keys, order = stable_sort(left * size + right, size * size)
    new = np.concatenate(([True], keys[1:] != keys[:-1]))
    which = np.empty(len(keys), dtype=np.int64)
    which[order] = np.cumsum(new) - 1  # each pair's number among the distinct ones
    joined = [stem(surface[k // size] + surface[k % size]) for k in keys[new].tolist()]
    get, add = vocabulary.get, vocabulary.setdefault
    as_term = _array([get(j, -1) for j in joined])[which]  # the pair as a word or whole, where one is
    phrase = _array([add(PHRASE + j, len(vocabulary)) for j in joined])[which]
    maybe = np.flatnonzero(as_term >= 0)
    if len(maybe):
        # Is (text, pair as a term) one of the texts' (text, word or whole)? Only those terms matter.
        size = len(vocabulary)
        wanted = np.zeros(size, dtype=bool)
        wanted[as_term[maybe]] = True
        texts, terms = _cat(words.texts + wholes.texts), _cat(words.terms + wholes.terms)
        has = wanted[terms]
        own = np.append(np.sort(texts[has] * size + terms[has]), np.iinfo(np.int64).max)  # (an end for searching)
        probe = owner[maybe] * size + as_term[maybe]
        keep = np.ones(len(owner), dtype=bool)
        keep[maybe[own[np.searchsorted(own, probe)] == probe]] = False
        owner, phrase = owner[keep], phrase[keep]
    phrases.extend(owner, phrase)


def _assemble(count: int, terms: list[str], streams: tuple[_Stream, _Stream, _Stream]) -> Analyses:
    parts = [(_cat(s.texts), _cat(s.ranks), _cat(s.terms)) for s in streams]
    counts = [np.bincount(texts, minlength=count).astype(np.int64) for texts, _, _ in parts]
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts[0] + counts[1] + counts[2], out=starts[1:])
    ids = np.empty(int(starts[-1]), dtype=np.int64)
    offset = starts[:-1]
    for (texts, ranks, part_ids), part_counts in zip(parts, counts, strict=True):
        ids[offset[texts] + ranks] = part_ids
        offset = offset + part_counts
    return Analyses(terms, starts, ids, counts[0], counts[1])


def _ranks(owners: IntArray) -> IntArray:
    """Each element's place among those of its owner (owners in order)."""
    if not len(owners):
        return owners
    first = np.flatnonzero(np.concatenate(([True], owners[1:] != owners[:-1])))
    return np.arange(len(owners), dtype=np.int64) - np.repeat(first, np.diff(np.append(first, len(owners))))


def _cat(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _array(values: Sequence[int]) -> IntArray:
    return np.array(values, dtype=np.int64)
