"""Identifiers → words, and the keys under which spelling variants of one name meet.

`create_issue`, `createIssue`, `Create-Issue`, `CREATE.ISSUE` and `createissue` are one name written
five ways: their `fold` is the same. `create_issues` and `create_issue` share the `number` key (each
word made singular); and `issue_create` the `bag` key (those words in sorted order) — unless the name
has a direction word (`html_to_markdown` is not `markdown_to_html`). Only number is normalised here,
not inflection: the search stemmer would also make `delete_fil` a spelling of `delete_file`, and a
typo is for the fuzzy rules to judge.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from mcpmanager.core.resolve.actions import is_verb
from mcpmanager.core.search.identifiers import split_identifier

# Words that give a name a direction: swapping what stands around them changes the meaning.
DIRECTION_WORDS = frozenset({"to", "from", "into", "2", "as", "vs", "versus", "onto", "than"})
# Words that start a qualifying phrase: what follows says which, not what (`…_by_date`).
PREPOSITIONS = frozenset({"by", "for", "with", "from", "in", "on", "of", "at", "to", "into"})
# Words that say nothing about which server or tool is meant when they prefix a name.
NOISE_WORDS = frozenset({"mcp", "server", "tool", "tools", "functions", "function", "default", "api"})


@lru_cache(maxsize=8192)
def words(name: str) -> tuple[str, ...]:
    """The lowercase words of an identifier (`search.identifiers`), cached: names repeat."""
    return split_identifier(name)


def fold(name: str) -> str:
    """Case, separators and camelCase gone: `Create-Issue` → `createissue`."""
    return "".join(words(name))


_KEEP_S = ("ss", "us", "is", "news", "series", "species", "status", "alias", "canvas", "analysis")


@lru_cache(maxsize=8192)
def singular(word: str) -> str:
    """English plural → singular, for the endings identifiers use (`queries`, `branches`, `files`)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_KEEP_S) or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes", "uses", "ases")):
        return word[:-2]
    return word[:-1]


def number_key(parts: tuple[str, ...]) -> str:
    """Plural and singular meet: `search_papers` ~ `search_paper`."""
    return " ".join(singular(w) for w in parts)


def bag_key(parts: tuple[str, ...]) -> str | None:
    """Word order ignored (`issue_create` ~ `create_issue`); None for names with a direction."""
    if len(parts) < 2 or DIRECTION_WORDS.intersection(parts):
        return None
    return " ".join(sorted(singular(w) for w in parts))


@lru_cache(maxsize=4096)
def server_forms(server: str) -> frozenset[str]:
    """The folded ways a model may write a server's name as a prefix: `desktop-commander` →
        `desktopcommander`; `mcp-server-chart` → `mcpserverchart` and `chart`; `google-maps` → also
        `maps` (tools and models shorten a brand to its last word: `maps_geocode`), unless that word is a
    verb (`brave-search`: not `search`)."""
    parts = words(server)
    forms = {"".join(parts)}
    meaningful = tuple(w for w in parts if w not in NOISE_WORDS)
    if meaningful:
        forms.add("".join(meaningful))
        if len(meaningful) > 1 and len(meaningful[-1]) >= 3 and not is_verb(meaningful[-1]):
            forms.add(meaningful[-1])
    forms.discard("")
    return frozenset(forms)


def head_of(parts: tuple[str, ...] | list[str]) -> int:
    """Where the thing a name is about stands: its last word, or the last before a qualifying phrase
    (`get_stock_price_by_date`: `price`), but the target of a conversion (`docx_to_pdf`: `pdf`);
    -1 for no words."""
    if any(w in ("to", "into", "2") for w in parts[1:]):
        return len(parts) - 1
    for at in range(1, len(parts)):
        if parts[at] in PREPOSITIONS:
            return at - 1
    return len(parts) - 1


# What parts a server's name from a tool's in a call (`github__x`, `github.x`, `github:x`, `github_x`).
SEPARATORS = re.compile(r"__|[:/.]|_|-")


def servers_named_in(called: str, servers: Iterable[str]) -> set[str]:
    """The servers `called` spells out before a separator, as `namespaced` reads a name
    (`github__create_issue`, `GitHub.createIssue`, `maps_geocode`); none for a bare name."""
    prefixes = {fold(called[: m.start()]) for m in SEPARATORS.finditer(called) if m.start() > 0}
    return {server for server in servers if server_forms(server) & prefixes}


def name_keys(parts: tuple[str, ...]) -> tuple[str | None, str | None, str | None]:
    """The keys a name's spellings meet under: the same words, also another number, also another order."""
    if not parts:
        return (None, None, None)
    return ("".join(parts), number_key(parts), bag_key(parts))


def close_names(called: str, names: Sequence[str], limit: int = 5) -> list[str]:
    """The names spelled most like `called` (for lists without a catalogue: parameters, servers)."""
    folded = {fold(name): name for name in names}
    return [folded[f] for f in difflib.get_close_matches(fold(called), list(folded), n=limit, cutoff=0.6)]
