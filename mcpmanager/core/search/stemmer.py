"""A light English stemmer for tool text: plurals, -ing, -ed and a few derivations.

Stems are match keys, not words: `create`, `creates`, `created`, `creating`, `creation` and
`creator` all become `creat`; `query`, `queries` and `querying` become `queri`. Only suffixes whose
removal rarely joins unrelated words are handled (no general -er: `customer`/`custom`,
`container`/`contain`, `timer`/`time` would meet). Words with digits and short words stay as they are.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_KEEP_DOUBLE = frozenset("lsz")  # `install`, `pass`, `buzz` keep their double letter
# Words the rules below would cut wrongly or join with a different word.
_EXCEPTIONS = {
    "news": "news",
    "series": "series",
    "species": "species",
    "always": "always",
    "perhaps": "perhaps",
    "embed": "embed",
    "embedded": "embed",
    "embedding": "embed",
    "embeddings": "embed",
    "shred": "shred",
    "hundred": "hundred",
    "during": "during",
    "string": "string",
    "strings": "string",
    "thing": "thing",
    "things": "thing",
    "nothing": "nothing",
    "something": "something",
    "anything": "anything",
    "everything": "everything",
    "ceiling": "ceiling",
    "wedding": "wedding",
    "pudding": "pudding",
    "morning": "morning",
    "evening": "evening",
    "red": "red",
    "bed": "bed",
    "alias": "alias",
    "aliases": "alias",
    "canvas": "canvas",
    "atlas": "atlas",
}


def _has_vowel(text: str) -> bool:
    return any(c in _VOWELS for c in text)


def _undouble(word: str) -> str:
    """`runn` → `run`, `sett` → `set`; `add`, `install` stay."""
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in _VOWELS and word[-1] not in _KEEP_DOUBLE:
        return word[:-1]
    return word


def _plural(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "i"  # `queries` → `queri`, the stem of `query` below
    if word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "'s")):
        if word.endswith("is") and len(word) != 4:  # `analysis`, `redis`; but `apis`, `uris`
            return word
        return word[:-1]
    return word


def _inflection(word: str) -> str:
    if word.endswith("ing") and len(word) > 5 and _has_vowel(word[:-3]):
        return _undouble(word[:-3])
    if word.endswith("eed"):
        return word  # `need`, `feed`, `speed`
    if word.endswith("ed") and len(word) > 4 and _has_vowel(word[:-2]):
        return _undouble(word[:-2])
    return word


def _derivation(word: str) -> str:
    """Nouns of action and agents back to their verb: `deletion`, `generator`, `payment`."""
    for suffix, replacement, min_stem in (
        ("ization", "iz", 3),
        ("isation", "iz", 3),
        ("ation", "at", 3),
        ("ator", "at", 3),
        ("izer", "iz", 3),
        ("iser", "iz", 3),
        ("tion", "t", 4),
        ("ment", "", 4),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= min_stem:
            return word[: len(word) - len(suffix)] + replacement
    return word


def _ending(word: str) -> str:
    """British -ise as -ize, a final silent e dropped and a final y as i, so forms meet."""
    if word.endswith(("ise", "yse")) and len(word) >= 6:
        word = word[:-2] + "z"
    elif word.endswith("e") and not word.endswith("ee") and len(word) >= 4:
        word = word[:-1]
    if word.endswith("y") and len(word) >= 4 and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The match key of a lowercase word."""
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    word = _plural(word)
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    word = _derivation(_inflection(word))
    return _ending(word)
