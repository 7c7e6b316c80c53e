"""A tool's fields → one weight per term (BM25F).

Where a word occurs says how much it tells: a word of the tool's name names what it does, a word of a
parameter's description may be incidental. Each field's term counts are weighted, normalised by
the field's length against a fixed typical length (`pivot`), summed, and saturated once
(`tf·(k1+1)/(tf+k1)`), so ten mentions of a word in a long description do not beat one in the name.

The pivots are constants rather than the corpus' average lengths so that a tool's weights depend on
that tool alone: adding or removing other tools never changes them, and incremental updates give
exactly the index a rebuild would.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpmanager.core.search.analyzer import Analyzed, analyze
from mcpmanager.core.search.document import SearchDoc

K1 = 1.2
PHRASE = "\x01"  # marks a joined word pair of a text, apart from a word spelt the same


@dataclass(frozen=True)
class Field:
    weight: float
    b: float  # how much a long field is penalised (0: not at all)
    pivot: float  # a typical length of the field in words
    pairs: bool = True  # index joined word pairs (phrases, compounds) too


NAME = Field(3.0, 0.3, 3.0)
TITLE = Field(2.0, 0.3, 4.0)
DESCRIPTION = Field(1.0, 0.6, 30.0)
PARAM_NAMES = Field(0.8, 0.3, 6.0)
PARAM_TEXT = Field(0.6, 0.5, 40.0, pairs=False)
SERVER = Field(0.5, 0.0, 2.0)


@dataclass(frozen=True)
class DocTerms:
    weights: dict[str, float]  # term → saturated BM25F weight
    name_terms: tuple[str, ...]  # distinct words of the name, for the name-coverage bonus


def own_name(doc: SearchDoc) -> str:
    """The name without a leading copy of the server's name (`github_create_issue` on `github`): the
    words that tell a server's tools apart, which the name bonus is about. (The whole name is
    indexed: a query naming the server should still favour its tools.)"""
    lowered, server = doc.name.lower(), doc.server.lower()
    if server and lowered.startswith(server):
        rest = doc.name[len(server) :].lstrip("_-.:/ ")
        if rest and rest != doc.name[len(server) :]:
            return rest
    return doc.name


def _fields(doc: SearchDoc) -> list[tuple[Field, list[Analyzed]]]:
    return [
        (NAME, [analyze(doc.name)]),
        (TITLE, [analyze(doc.title)]),
        (DESCRIPTION, [analyze(doc.description)]),
        (PARAM_NAMES, [analyze(name) for name, _ in doc.params]),
        (PARAM_TEXT, [analyze(text) for _, text in doc.params]),
        (SERVER, [analyze(doc.server)]),
    ]


def doc_terms(doc: SearchDoc) -> DocTerms:
    weighted: dict[str, float] = {}
    for field, parts in _fields(doc):
        length = sum(len(part.words) for part in parts)
        if not length:
            continue
        scale = field.weight / (1.0 - field.b + field.b * length / field.pivot)
        for part in parts:
            for word in part.words + part.wholes:
                weighted[word] = weighted.get(word, 0.0) + scale
            if field.pairs:
                for pair in part.pairs:
                    phrase = PHRASE + pair
                    weighted[phrase] = weighted.get(phrase, 0.0) + scale
    weights = {term: tf * (K1 + 1.0) / (tf + K1) for term, tf in weighted.items()}
    name_terms = tuple(dict.fromkeys(analyze(own_name(doc)).words))
    return DocTerms(weights, name_terms)
