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

import dataclasses
import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from mcpmanager.core.resolve.actions import VERB_GROUPS, is_verb, related_readers, same_operation
from mcpmanager.core.resolve.words import DIRECTION_WORDS, head_of, singular, words
from mcpmanager.core.search.stemmer import stem
from mcpmanager.core.search.synonyms import BUILTIN_GROUPS

SAME_STEM = 0.95  # the same stem, not the same word: another number (`commit`/`commits`), or cut short
ABBREVIATION = 0.85
TYPO = 0.8
TYPO_FAR = 0.6  # two edits, in words of 8 letters or more
VERB_SYNONYM = 0.8
NOUN_SYNONYM = 0.55
WHOLE_TYPO = 0.9  # a whole name one edit away (`creatissue`)
RELATED_VERB = 0.5  # neighbouring reading verbs (`get` and `list`): related, not the same
KIND_OF = 0.8  # a brand of the kind the call names: `web` for `bing` (one way: `bing` is not `web`)
VERB_WEIGHT = 1.0  # what a missing verb costs (see _word_score)
STRONG = TYPO  # a word matched at least this surely counts in a match's structure
# Changes each kind of word match counts as (at most MAX_STEPS in a resolution; see names.py).
_STEPS = {1.0: 0.0, SAME_STEM: 0.5, ABBREVIATION: 0.5}
CANDIDATES = 200  # tools scored in full per reading of a call (the rest share too little of it)
# Last words that say what form a result takes, not what it is about (`resolve-library-id`).
GENERIC_TAILS = frozenset({"id", "ids", "info", "details", "data", "name", "names", "list", "value", "values"})
_SCOPE = frozenset({"batch", "bulk", "multiple", "many"})
# Fillers: present or absent, they do not change which tool is meant.
_FILLERS = frozenset({"a", "an", "the", "my", "of", "for", "in", "on", "at", "by", "with", "all", "this"})
FILLER_WEIGHT = 0.2


# Brands that are what a generic word names: a call for a `web_search` is answered by `bing_search`.
_KINDS = {
    "web": frozenset(
        {"google", "bing", "duckduckgo", "ddg", "brave", "exa", "tavily", "serper", "serpapi", "searxng"}
        | {"searx", "kagi", "baidu", "yandex", "perplexity", "jina", "you"}
    ),
}


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


_DERIVED = ("ical", "ics", "ic", "ies", "y", "al")  # `historical`/`history`, `statistics`/`statistical`


def _root(word: str) -> str:
    """A word without the endings that turn a noun into an adjective or back: `histor`, `statist`."""
    for ending in _DERIVED:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


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
    if sa == sb or (len(a) >= 6 and len(b) >= 6 and a[:4] == b[:4] and _root(a) == _root(b)):
        return SAME_STEM
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) >= 4 and long.startswith(short) and len(short) >= 0.4 * len(long):
        return ABBREVIATION
    if is_verb(a) and is_verb(b) and same_operation(a, b):
        return VERB_SYNONYM
    if sb in _SYNONYMS.get(sa, ()):
        return VERB_SYNONYM if is_verb(a) and is_verb(b) else NOUN_SYNONYM
    if related_readers(a, b):
        return RELATED_VERB
    if b in _KINDS.get(a, ()):
        return KIND_OF
    if min(len(a), len(b)) >= 3 and max(len(a), len(b)) <= 4:
        return TYPO if _short_typo(a, b) else 0.0
    limit = _typo_limit(max(len(a), len(b))) if min(len(a), len(b)) >= 4 else 0
    # Each edit changes at most two letters of the letter sets: a cheap test before the distance.
    edits = distance(a, b, limit) if limit and len(set(a) ^ set(b)) <= 2 * limit else limit + 1
    if edits > limit:
        return 0.0
    return TYPO if edits == 1 else TYPO_FAR


def _short_typo(a: str, b: str) -> bool:
    """A short word with two letters swapped (`uesr`, `lsit`, `jbo`). Not a letter changed, left out
    or added, which makes other real words (`tag`/`tab`, `int`/`init`), and never from a verb: a
    call's `get` is not a misspelt word of another tool."""
    return len(a) == len(b) and sorted(a) == sorted(b) and not is_verb(a) and distance(a, b, 1) == 1


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

    def score(
        self, called: Sequence[str], folded: str, shape: NameShape, foreign: frozenset[str] = frozenset()
    ) -> Match:
        """`foreign`: called words that name another server or tool family than this tool's."""
        whole = _whole_score(folded, shape) if len(called) != len(shape.parts) else Match(0.0, math.inf)
        return max(self._word_score(called, shape, foreign), whole, key=lambda m: m.score)

    def _word_score(self, called: Sequence[str], shape: NameShape, foreign: frozenset[str]) -> Match:
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
        sure: list[str] = []
        order: list[tuple[int, int]] = []
        for similarity, i, j in pairs:
            if i not in used_called and j not in used_target:
                used_called.add(i)
                used_target.add(j)
                order.append((i, j))
                matched += similarity * self.weight(called[i])
                steps += _STEPS.get(similarity, 1.0)
                if similarity >= STRONG:
                    sure.append(called[i])
        if DIRECTION_WORDS.intersection(called) or DIRECTION_WORDS.intersection(shape.parts):
            targets = [j for _, j in sorted(order)]
            if targets != sorted(targets):  # `markdown_to_html` is not `html_to_markdown`
                return Match(0.0, math.inf)
        unmatched = [w for i, w in enumerate(called) if i not in used_called and w not in _FILLERS]
        missing_at = [j for j in range(shape.optional, len(shape.parts)) if j not in used_target]
        missing_at = [j for j in missing_at if shape.parts[j] not in _FILLERS]
        missing = [shape.parts[j] for j in missing_at]
        steps += len(unmatched) + len(missing)
        contradicted = sum(1 for w in unmatched if w in foreign)
        steps += contradicted  # the call names another server: a contradiction, on top of a word
        # Scope words change what a call touches (`firecrawl_batch_scrape` is not `firecrawl_scrape`).
        steps += sum(1.0 for w in (*unmatched, *missing) if w in _SCOPE)
        ours = head_of(list(called))  # past the first word it is a thing, even a verb-like one (`…_diff`)
        if ours > 0 and ours not in used_called and called[ours] not in GENERIC_TAILS:
            steps += 1.0  # the thing the call asks about has no counterpart (`get_pull_request_diff`)
        at = head_of(shape.parts)
        if at in missing_at and not _verb_at(shape.parts, at, at) and shape.parts[at] not in GENERIC_TAILS:
            steps += 1.0  # the thing the tool is about (`jira_get_sprint_issues`): a guess beyond a word
        # A verb the call lacks weighs the same whatever the verb: how common `get` or `upload` is
        # among the catalogue's names says nothing about which one the model meant.
        total = sum(self.weight(w) for w in called)
        total += sum(VERB_WEIGHT if _verb_at(shape.parts, j, at) else self.weight(shape.parts[j]) for j in missing_at)
        structure = (len(sure), len(order), len(missing), len(unmatched))
        score = matched / total if total else 0.0
        return Match(score, steps, structure, frozenset(sure), contradicted > 0, tuple(unmatched))


@dataclass(frozen=True)
class Match:
    score: float  # 0 … 1
    steps: float  # how many changes (a typo, a synonym, a word more or less) part the two names
    # (called words matched surely, matched at all, tool words missing, called words left over). A
    # score is a sum of word rarities; the structure says which match explains more of the call.
    structure: tuple[int, int, int, int] = (0, 0, 0, 0)
    sure: frozenset[str] = frozenset()  # the called words matched surely
    contradicted: bool = False  # the call names another server than this tool's
    left: tuple[str, ...] = ()  # the called words the name leaves unexplained (fillers aside)

    def explained_by(self, named: frozenset[str], thing: str | None) -> Match:
        """This match if the called words a tool's parameters name counted as matched: the call
        `get_story_comments` says of `getComments(storyId)` what its name leaves out. The thing the
        call is about and its verb must be in the name: `jira_search(fields)` is not
        `jira_search_field`, `copy_page(new_title)` not `new_page`."""
        found = [w for w in self.left if w != thing and not is_verb(w) and _named(w, named)]
        if not found:
            return self
        sure, matched, missing, unmatched = self.structure
        structure = (sure + len(found), matched + len(found), missing, unmatched - len(found))
        left = tuple(w for w in self.left if w not in found)
        # The score stays the name's: only the structure, which says what is explained, changes.
        return dataclasses.replace(
            self, steps=self.steps - len(found), structure=structure, sure=self.sure | set(found), left=left
        )

    def dominates(self, other: Match) -> bool:
        """At least as good in every part of the structure and better in one: otherwise the two are
        rivals, whatever their scores (which of two words is rarer is no evidence of intent)."""
        ours, theirs = self.structure, other.structure
        at_least = ours[0] >= theirs[0] and ours[1] >= theirs[1] and ours[2] <= theirs[2] and ours[3] <= theirs[3]
        return at_least and ours != theirs


def _verb_at(parts: Sequence[str], at: int, head: int) -> bool:
    """Whether the word at `at` of a name is its verb: past the first word, the word that names
    what the tool is about (`head`) is a thing even when it could be a verb (`get_sitemap_stats`)."""
    return is_verb(parts[at]) and (at == 0 or at != head)


def thing_of(called: Sequence[str]) -> str | None:
    """The word naming what a call is about: its head, or the last word before a verb that ends it
    (`table_create`: `table`)."""
    at = head_of(list(called))
    while at > 0 and is_verb(called[at]):
        at -= 1
    return called[at] if at >= 0 and not is_verb(called[at]) else None


def _named(word: str, named: frozenset[str]) -> bool:
    return singular(word) in named or _root(singular(word)) in named


def param_words(names: Iterable[str]) -> frozenset[str]:
    """The words of a tool's parameter names, singular, and their roots (`storyId` → story, id)."""
    found = {singular(w) for name in names for w in words(name)}
    return frozenset(found | {_root(w) for w in found})


def _whole_score(folded: str, shape: NameShape) -> Match:
    """One edit in the whole folded name: a typo across words, or with the separators gone (only
    scored when the word counts differ; otherwise the words tell more)."""
    if len(shape.folded) < 6 or abs(len(folded) - len(shape.folded)) > 1 or len(_letters(folded) ^ shape.letters) > 2:
        return Match(0.0, math.inf)
    if distance(folded, shape.folded, 1) > 1:
        return Match(0.0, math.inf)
    return Match(WHOLE_TYPO, 1.0, (len(shape.parts), len(shape.parts), 0, 0), frozenset(shape.parts))
