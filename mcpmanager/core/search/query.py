"""A query's text → the weighted terms to look up.

The user's own words count fully. The rest are hints that count less:
- a pair of adjacent query words as a phrase (matching the same pair in a tool's text), and as one
  compound word (`user name` meets `username`); a query word also meets a tool's pair as a compound;
- synonyms of the query's words (`synonyms`), each word of an expansion, and its phrase.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpmanager.core.search.analyzer import analyze_query
from mcpmanager.core.search.fields import PHRASE
from mcpmanager.core.search.synonyms import SynonymMap

PAIR_WEIGHT = 0.5  # a query's word pair met as the same pair (a phrase), against a word
COMPOUND_WEIGHT = 0.8  # a word pair met as one word, or a word met as a pair (`username`)
SYNONYM_WEIGHT = 0.4  # a synonym's word, against a word the user wrote
NUMBER_WEIGHT = 0.5  # a number the user wrote (`top 10`, `port 8080`): rarely names a tool


@dataclass(frozen=True)
class Query:
    weights: dict[str, float]  # term → weight (phrase terms start with PHRASE)
    own: dict[str, float]  # the words the user wrote → weight (the share of `weights` that is theirs)


def build_query(text: str, synonyms: SynonymMap) -> Query:
    analyzed = analyze_query(text)
    own = {word: NUMBER_WEIGHT if word.isdigit() else 1.0 for word in analyzed.words + analyzed.wholes}
    weights = dict(own)

    def hint(term: str, weight: float) -> None:
        if weight > weights.get(term, 0.0):
            weights[term] = weight

    for word in own:
        hint(PHRASE + word, COMPOUND_WEIGHT)
    for pair in analyzed.pairs:
        hint(PHRASE + pair, PAIR_WEIGHT)
        hint(pair, COMPOUND_WEIGHT)
    for expansion in synonyms.expand(analyzed.words):
        for word in expansion.words:
            hint(word, SYNONYM_WEIGHT)
        for pair in expansion.pairs:
            hint(PHRASE + pair, SYNONYM_WEIGHT * PAIR_WEIGHT)
            hint(pair, SYNONYM_WEIGHT * COMPOUND_WEIGHT)
    return Query(weights, own)
