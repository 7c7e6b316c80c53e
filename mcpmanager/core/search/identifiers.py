"""Identifiers → words: the one splitter of tool and parameter names, for search and for resolution.

`create_issue`, `createIssue`, `Create-Issue` and `CREATE.ISSUE` are the words `create`, `issue`.
Words break at every separator and at camelCase boundaries (`HTMLParser` → `html`, `parser`); the
plural of an acronym is one word, the acronym (`getPRs` → `get`, `pr`; `URLs` → `url`), not `P` +
`Rs`; accents are dropped (`café` → `cafe`).
"""

from __future__ import annotations

import re
import unicodedata

CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
WORD = re.compile(r"[^\W_]+")
_ACRONYM_PLURAL = re.compile(r"([A-Z]{2,})s(?![a-z])")


def without_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def singular_acronyms(text: str) -> str:
    """`PRs` → `PR`, `getURLs` → `getURL`: so the camelCase split keeps the acronym whole."""
    return _ACRONYM_PLURAL.sub(r"\1", text)


def split_identifier(name: str) -> tuple[str, ...]:
    """The lowercase words of an identifier."""
    return tuple(w.lower() for w in WORD.findall(CAMEL.sub(" ", singular_acronyms(without_accents(name)))))
