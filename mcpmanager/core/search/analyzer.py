"""Text → search terms, the same way for tool text and for queries.

Tool names are identifiers (`get_pull_request`, `listFiles`, `cosmos.db/query`) while queries are
prose, so both are split on every separator and camelCase boundary, lowercased, stripped of English
stop words and reduced by a light suffix stemmer, so `repositories`, `repository` and `repo…` meet.

Besides single words the analyzer yields the joined form of adjacent word pairs (`user name` →
`username`), stemmed like a word. Such a pair term matches the same pair in another text (a phrase
bonus) and the one-word spelling (`username`, `filename`, `wordcloud`) too: catalogues and people
disagree on compounds all the time.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from mcpmanager.core.search.identifiers import CAMEL, WORD, singular_acronyms, without_accents
from mcpmanager.core.search.stemmer import stem
from mcpmanager.core.search.stopwords import STOP_WORDS

# A query is what a model typed, but it may carry a pasted file: bound the work and the terms.
MAX_QUERY_CHARS = 4000
MAX_QUERY_TERMS = 64
# A whitespace-free run this long is data (base64, a hash, a minified blob), not words.
MAX_CHUNK = 80

_HTML_TAGS = (
    "a|abbr|b|blockquote|body|br|center|code|dd|del|details|div|dl|dt|em|font|h[1-6]|head|hr|html|i|img|"
    "ins|kbd|li|mark|ol|p|pre|q|s|samp|small|span|strong|sub|summary|sup|table|tbody|td|th|thead|tr|tt|u|ul"
)
_MARKUP = re.compile(
    r"<!--.*?-->"  # comments
    rf"|</?(?:{_HTML_TAGS})(?:\s[^<>]*)?/?>"  # HTML tags; `<service-name>`, `<ask this>` are kept
    r"|&(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);"  # entities
    r"|\]\([^)\s]*\)",  # the target of a markdown link: keep its text
    re.DOTALL | re.IGNORECASE,
)
_LONG_CHUNK = re.compile(rf"\S{{{MAX_CHUNK + 1},}}")
# Scripts written without spaces: index overlapping character pairs (the usual CJK approach).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CJK_OR_OTHER = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+|[^\W_]+")


@dataclass(frozen=True)
class Analyzed:
    """The terms of one text, stemmed: `words` in order, `wholes` = camelCase tokens unsplit,
    `pairs` = adjacent words joined."""

    words: tuple[str, ...]
    pairs: tuple[str, ...]
    wholes: tuple[str, ...]


def clean(text: str) -> str:
    """Markup and long data runs removed; the text is otherwise kept as it is."""
    text = without_markup(text)
    return _LONG_CHUNK.sub(" ", text) if len(text) > MAX_CHUNK else text


def without_markup(text: str) -> str:
    return _MARKUP.sub(" ", text) if "<" in text or "&" in text or "](" in text else text


def split_words(text: str) -> list[list[str]]:
    """Lowercase surface words, grouped by the token they come from: an identifier split on
    separators gives one group per part, a camelCase token one group of its pieces (`MySQL` →
    `my`, `sql`), CJK text one group per character pair. Accents are dropped."""
    groups: list[list[str]] = []
    plain = text.isascii()
    for token in (WORD if plain else _CJK_OR_OTHER).findall(text):
        if not plain and not token.isascii():
            if _CJK.fullmatch(token):
                groups.extend([[token[i : i + 2]] for i in range(max(1, len(token) - 1))])
                continue
            token = without_accents(token)
        tail = token[1:]
        if tail.islower() or not any(c.isupper() for c in tail):
            groups.extend([w.lower()] for w in WORD.findall(token))  # the usual word: no camelCase inside
        else:
            groups.append([w.lower() for w in WORD.findall(CAMEL.sub(" ", token))])
    return [g for g in groups if g]


def _is_content(word: str) -> bool:
    # One letter is never a word worth matching on (`s` of `user's`, list markers); digits are.
    return word not in STOP_WORDS and (len(word) > 1 or word.isdigit())


def _joinable(word: str) -> bool:
    # Numbers make no compounds; CJK character pairs already overlap.
    return not word.isdigit() and (word.isascii() or not _CJK.match(word))


@lru_cache(maxsize=16384)
def analyze(text: str) -> Analyzed:
    """The terms of a tool's text (a name, a description, a parameter).

    A camelCase token gives its pieces and itself whole (`MySQL` → `sql`, `mysql`; `GitHub` → `git`,
    `hub`, `github`): brand names are written that way, and the whole is what tells them apart.
    Results are cached: catalogues repeat texts (the same parameter on every tool of a server).
    """
    text = singular_acronyms(clean(text))
    if text.isascii():  # the common case, with whole-text regexes instead of a loop over tokens
        split = CAMEL.sub(" ", text)
        surface = [w for w in WORD.findall(split.lower()) if _is_content(w)]
        camel = [] if split == text else [t.lower() for t in WORD.findall(text) if CAMEL.search(t)]
        whole_surface = [w for w in camel if _is_content(w)]
    else:
        surface, whole_surface = [], []
        for group in split_words(text):
            surface.extend(w for w in group if _is_content(w))
            if len(group) > 1 and _is_content(whole := "".join(group)):
                whole_surface.append(whole)
    words = [stem(w) for w in surface]
    wholes = [stem(w) for w in whole_surface]
    known = set(words).union(wholes)
    # Each word's joinability once (a word is in two pairs); ASCII words only need not be numbers.
    ascii_only = text.isascii()
    join = [not w.isdigit() if ascii_only else _joinable(w) for w in surface]
    pairs = [
        joined
        for i, (a, b) in enumerate(itertools.pairwise(surface))
        if join[i] and join[i + 1] and (joined := stem(a + b)) not in known
    ]
    return Analyzed(tuple(words), tuple(pairs), tuple(wholes))


def analyze_query(query: str) -> Analyzed:
    """The terms of a query: like `analyze`, but bounded and without repeats, first occurrence first.

    The text is cut at MAX_QUERY_CHARS and at MAX_QUERY_TERMS distinct words, so a pasted blob costs
    no more than a long sentence.
    """
    analyzed = analyze(query[:MAX_QUERY_CHARS])
    words = tuple(dict.fromkeys(analyzed.words))[:MAX_QUERY_TERMS]
    kept = set(words)
    wholes = tuple(w for w in dict.fromkeys(analyzed.wholes) if w not in kept)[:MAX_QUERY_TERMS]
    kept.update(wholes)
    pairs = tuple(p for p in dict.fromkeys(analyzed.pairs) if p not in kept)[:MAX_QUERY_TERMS]
    return Analyzed(words, pairs, wholes)


def terms(text: str) -> list[str]:
    """Just the stemmed words of `text` (for synonym entries and tests)."""
    return list(analyze(text).words)
