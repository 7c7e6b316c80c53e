"""How close a called name is to each tool's name: word by word, or as one misspelt string.

Word level: each word of the called name is paired with at most one word of the tool's name (or of
its server's name, which models often put in front), by the best of: the same word, the same stem,
an abbreviation (`repo`/`repository`), a typo (one edit, two in long words), or a synonym from the
general software vocabulary — verbs (`fetch`/`get`) more readily than nouns (`url`/`link`): a
swapped verb is how models misremember names, a swapped noun may be another thing. Words count by
their rarity among the catalogue's names, so `get` matters less than `issue`. The score is the
matched weight over the weight of both names' words, a weighted Jaccard.

Whole-name level: the folded names a few edits apart (`creatissue`, `delete_fil`).

Only tools sharing a related word, or of a similar length for the whole-name check, are scored, so a
miss costs about a millisecond on a catalogue of hundreds of tools.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from mcpmanager.core.resolve.actions import READING_VERBS, VERB_GROUPS, is_verb
from mcpmanager.core.resolve.words import DIRECTION_WORDS
from mcpmanager.core.search.stemmer import stem
from mcpmanager.core.search.synonyms import BUILTIN_GROUPS

SAME_STEM = 0.95
ABBREVIATION = 0.85
TYPO = 0.8
TYPO_FAR = 0.6  # two edits, in words of 8 letters or more
VERB_SYNONYM = 0.8
NOUN_SYNONYM = 0.5
WHOLE_TYPO = 0.9  # a whole name one edit away (`creatissue`)
RELATED_VERB = 0.5  # two reading verbs of different groups (`get` and `list`): related, not the same
VERB_WEIGHT = 1.0  # what a missing verb costs (see _word_score)
STRONG = TYPO  # a word matched at least this surely counts in a match's structure
CANDIDATES = 200  # tools scored in full per reading of a call (the rest share too little of it)
# Fillers: present or absent, they do not change which tool is meant.
_FILLERS = frozenset({"a", "an", "the", "my", "of", "for", "in", "on", "at", "by", "with", "all", "this"})
FILLER_WEIGHT = 0.2


def _synonym_sets() -> dict[str, frozenset[str]]:
    """Nouns from the search vocabulary; verbs from the resolver's own groups, which keep apart what
    names keep apart (`get` one thing, `list` many; the search's groups join them)."""
    sets: dict[str, set[str]] = {}
    verbs = {stem(v) for group in VERB_GROUPS for v in group}
    noun_groups = [[m for m in g if stem(m) not in verbs] for g in BUILTIN_GROUPS]
    for group in [*noun_groups, *VERB_GROUPS]:
        singles = {stem(member) for member in group if " " not in member and "-" not in member}
        for member in singles:
            sets.setdefault(member, set()).update(singles - {member})
    return {word: frozenset(others) for word, others in sets.items()}


_SYNONYMS = _synonym_sets()


def distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (a transposition is one edit); `limit + 1` once past it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _typo_limit(length: int) -> int:
    """Edits a word of this length may be away and still be a typo of it (`isue`, `stauts`)."""
    return 0 if length < 5 else 1 if length < 10 else 2


@lru_cache(maxsize=65536)
def word_similarity(a: str, b: str) -> float:
    """How surely word `a` (called) means word `b` (the tool's): 1 the same … 0 unrelated."""
    if a == b:
        return 1.0
    if a.isdigit() or b.isdigit():
        return 0.0
    sa, sb = stem(a), stem(b)
    if sa == sb:
        return SAME_STEM
    if sb in _SYNONYMS.get(sa, ()):
        return VERB_SYNONYM if is_verb(a) and is_verb(b) else NOUN_SYNONYM
    if a in READING_VERBS and b in READING_VERBS:
        return RELATED_VERB
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) >= 4 and long.startswith(short) and len(short) >= 0.4 * len(long):
        return ABBREVIATION
    limit = _typo_limit(max(len(a), len(b))) if min(len(a), len(b)) >= 4 else 0
    # Each edit changes at most two letters of the letter sets: a cheap test before the distance.
    edits = distance(a, b, limit) if limit and len(set(a) ^ set(b)) <= 2 * limit else limit + 1
    if edits > limit:
        return 0.0
    return TYPO if edits == 1 else TYPO_FAR


@dataclass(frozen=True)
class NameShape:
    """One tool's name as the scorer sees it."""

    key: str
    parts: tuple[str, ...]  # words of the name
    optional: int  # how many leading words repeat the server's name (`playwright_navigate`: 1)
    folded: str

    @property
    def letters(self) -> frozenset[str]:
        return _letters(self.folded)


@lru_cache(maxsize=65536)
def _letters(text: str) -> frozenset[str]:
    return frozenset(text)


class Vocabulary:
    """The words of every tool's name and server, with their rarity (an idf over tool names)."""

    def __init__(self, shapes: Iterable[NameShape]) -> None:
        self.shapes = {shape.key: shape for shape in shapes}
        self._tools_of: dict[str, set[str]] = defaultdict(set)  # word → tool keys
        self._by_length: dict[int, list[str]] = defaultdict(list)
        self._by_stem: dict[str, list[str]] = defaultdict(list)
        self._folded_by_length: dict[int, list[NameShape]] = defaultdict(list)
        counts: dict[str, int] = defaultdict(int)
        for shape in self.shapes.values():
            for word in shape.parts:
                self._tools_of[word].add(shape.key)
            for stemmed in {stem(w) for w in shape.parts}:
                counts[stemmed] += 1
            self._folded_by_length[len(shape.folded)].append(shape)
        for word in self._tools_of:
            self._by_length[len(word)].append(word)
            self._by_stem[stem(word)].append(word)
        self._counts = dict(counts)
        self._total = max(len(self.shapes), 1)
        self._related: dict[str, dict[str, float]] = {}

    def weight(self, word: str) -> float:
        if word in _FILLERS:
            return FILLER_WEIGHT
        return math.log(1.0 + self._total / (1.0 + self._counts.get(stem(word), 0)))

    def related(self, word: str) -> dict[str, float]:
        """Every known word `word` may stand for, with how surely."""
        found = self._related.get(word)
        if found is None:
            stemmed = stem(word)
            near = [w for s in (stemmed, *_SYNONYMS.get(stemmed, ())) for w in self._by_stem.get(s, ())]
            # Abbreviations (the short one at least 0.4 of the long) and typos (at most two edits).
            for length in range(math.ceil(len(word) * 0.4), max(len(word) + 2, int(len(word) * 2.5)) + 1):
                near.extend(self._by_length.get(length, ()))
            found = {}
            for known in near:
                if (similarity := word_similarity(word, known)) > 0:
                    found[known] = similarity
            if len(self._related) > 4096:
                self._related.clear()
            self._related[word] = found
        return found

    def candidates(self, called: Sequence[str], folded: str) -> set[str]:
        """Keys of the tools worth scoring: the CANDIDATES best by the weight of the called words they
        share (a cheap upper bound of the word score), and those of a similar whole spelling."""
        totals: dict[str, float] = defaultdict(float)
        for word in called:
            best: dict[str, float] = {}
            weight = self.weight(word)
            for known, similarity in self.related(word).items():
                for key in self._tools_of[known]:
                    if similarity > best.get(key, 0.0):
                        best[key] = similarity
            for key, similarity in best.items():
                totals[key] += similarity * weight
        keys = set(heapq.nlargest(CANDIDATES, totals, key=lambda k: (totals[k], k)))
        letters = set(folded)
        for length in range(len(folded) - 1, len(folded) + 2):
            for shape in self._folded_by_length.get(length, ()):
                if len(letters ^ shape.letters) <= 2:
                    keys.add(shape.key)
        return keys

    def score(self, called: Sequence[str], folded: str, shape: NameShape) -> Match:
        whole = _whole_score(folded, shape) if len(called) != len(shape.parts) else Match(0.0, math.inf)
        return max(self._word_score(called, shape), whole, key=lambda m: m.score)

    def _word_score(self, called: Sequence[str], shape: NameShape) -> Match:
        """Weighted Jaccard of the called words against the tool's words (its server prefix optional)."""
        pairs: list[tuple[float, int, int]] = []
        for i, word in enumerate(called):
            related = self.related(word)
            for j, target in enumerate(shape.parts):
                if (similarity := related.get(target, 0.0)) > 0:
                    pairs.append((similarity, i, j))
        pairs.sort(reverse=True)
        used_called: set[int] = set()
        used_target: set[int] = set()
        matched = steps = 0.0
        strong = 0
        order: list[tuple[int, int]] = []
        for similarity, i, j in pairs:
            if i not in used_called and j not in used_target:
                used_called.add(i)
                used_target.add(j)
                order.append((i, j))
                matched += similarity * self.weight(called[i])
                steps += 0.0 if similarity >= SAME_STEM else 0.5 if similarity == ABBREVIATION else 1.0
                strong += similarity >= STRONG
        if DIRECTION_WORDS.intersection(called) or DIRECTION_WORDS.intersection(shape.parts):
            targets = [j for _, j in sorted(order)]
            if targets != sorted(targets):  # `markdown_to_html` is not `html_to_markdown`
                return Match(0.0, math.inf)
        unmatched = [w for i, w in enumerate(called) if i not in used_called and w not in _FILLERS]
        missing = [w for j, w in enumerate(shape.parts) if j not in used_target and j >= shape.optional]
        missing = [w for w in missing if w not in _FILLERS]
        steps += len(unmatched) + len(missing)
        # A verb the call lacks weighs the same whatever the verb: how common `get` or `upload` is
        # among the catalogue's names says nothing about which one the model meant.
        total = sum(self.weight(w) for w in called)
        total += sum(VERB_WEIGHT if is_verb(w) else self.weight(w) for w in missing)
        return Match(matched / total if total else 0.0, steps, (strong, len(missing), len(unmatched)))


@dataclass(frozen=True)
class Match:
    score: float  # 0 … 1
    steps: float  # how many changes (a typo, a synonym, a word more or less) part the two names
    # (called words matched surely, tool words missing, called words unmatched): two matches of the
    # same structure differ only by how rare their words are, no evidence of what the model meant.
    structure: tuple[int, int, int] = (0, 0, 0)

    def rivals(self, other: Match) -> bool:
        """Whether `other` is as plausible in structure: as many words surely matched, no more words
        missing or left over."""
        ours, theirs = self.structure, other.structure
        return theirs[0] >= ours[0] and theirs[1] <= ours[1] and theirs[2] <= ours[2]


def _whole_score(folded: str, shape: NameShape) -> Match:
    """One edit in the whole folded name: a typo across words, or with the separators gone (only
    scored when the word counts differ; otherwise the words tell more)."""
    if len(shape.folded) < 6 or abs(len(folded) - len(shape.folded)) > 1 or len(_letters(folded) ^ shape.letters) > 2:
        return Match(0.0, math.inf)
    return Match(WHOLE_TYPO, 1.0) if distance(folded, shape.folded, 1) <= 1 else Match(0.0, math.inf)
