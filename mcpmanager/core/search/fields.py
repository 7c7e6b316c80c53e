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

from mcpmanager.core.search.analyzer import analyze
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


# A text's word count, its terms (words, then camelCase wholes) and its phrase terms, ready to add up.
Bag = tuple[int, tuple[str, ...], tuple[str, ...]]
Bags = dict[str, Bag]


def _bag(text: str, bags: Bags) -> Bag:
    found = bags.get(text)
    if found is None:
        analyzed = analyze(text)
        terms = analyzed.words + analyzed.wholes
        found = bags[text] = (len(analyzed.words), terms, tuple(PHRASE + pair for pair in analyzed.pairs))
    return found


def doc_terms(doc: SearchDoc, bags: Bags | None = None) -> DocTerms:
    """The tool's term weights (an upsert; a rebuild computes every tool's at once, with the same
    arithmetic, in `bulk_terms`). `bags`: texts already analysed, when several tools are added."""
    bags = {} if bags is None else bags
    fields = (
        (NAME, (_bag(doc.name, bags),)),
        (TITLE, (_bag(doc.title, bags),)),
        (DESCRIPTION, (_bag(doc.description, bags),)),
        (PARAM_NAMES, tuple(_bag(name, bags) for name, _ in doc.params)),
        (PARAM_TEXT, tuple(_bag(text, bags) for _, text in doc.params)),
        (SERVER, (_bag(doc.server, bags),)),
    )
    weighted: dict[str, float] = {}
    get = weighted.get
    for field, parts in fields:
        length = sum(part[0] for part in parts)
        if not length:
            continue
        scale = field.weight / (1.0 - field.b + field.b * length / field.pivot)
        pairs = field.pairs
        for _, terms, phrases in parts:
            for term in terms:
                weighted[term] = get(term, 0.0) + scale
            if pairs:
                for phrase in phrases:
                    weighted[phrase] = get(phrase, 0.0) + scale
    saturation = K1 + 1.0
    weights = {term: tf * saturation / (tf + K1) for term, tf in weighted.items()}
    count, terms, _ = _bag(own_name(doc), bags)  # mostly the name itself: analysed above
    name_terms = tuple(dict.fromkeys(terms[:count]))
    return DocTerms(weights, name_terms)
