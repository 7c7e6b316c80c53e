"""Texts and tools to compare a rebuild's bulk path with the one-text, one-tool path on."""

from __future__ import annotations

import json
import random
from pathlib import Path

from mcpmanager.core.catalogue.exposed_names import assign_exposed_names
from mcpmanager.core.search.bulk_analyzer import SEP
from mcpmanager.core.search.document import SearchDoc

CATALOGUES = Path(__file__).resolve().parents[2] / "data" / "catalogues"
# Pieces to make texts of.
_IDENTIFIERS = ["get", "PRs", "URLs", "ABCs", "HTTPServer", "aBC", "IDs", "OAuth2", "Token", "iOS", "x1Y", "sPRs"]
_MORE_IDENTIFIERS = ["PRsabc", "URLS", "HTMLs", "ABs", "userName", "user_name", "CREATE.ISSUE", "listFiles", "Name"]
_CAMEL = ["XMLHttpRequest", "GitHub", "MySQL", "AnyOne", "WhatEver", "ItIs", "AIs"]  # some wholes are stop words
_WORDS = ["my", "user", "name", "the", "of", "a", "s", "12", "3", "0", "00", "file", "filename", "repo", "repos"]
_STEMMED = ["queries", "created", "running", "ise", "analysis", "thing", "something", "every", "e", "es", "ation"]
_MARKUP = ["<b>", "</b>", "&amp;", "](http://x.y/z)", "<!--", "-->", "[t]"]
_SEPARATORS = ["_", "-", ".", "/", ":", "'", '"', "(", ")", SEP, "\x1d", "\t", "\n", " "]
_OUTSIDE_ASCII = ["’", "—", "🚀", "é", "café", "東京", "ｆｕｌｌ", "①", "İ", "ß"]
_SPACES_OUTSIDE_ASCII = ["\u00a0", "\u2009", "\u3000", "\u200b"]  # (the last is no space)
_LONG_RUNS = ["x" * 85, "Ab" * 45, "a’" * 45]
FRAGMENTS = [
    *_IDENTIFIERS,
    *_MORE_IDENTIFIERS,
    *_CAMEL,
    *_WORDS,
    *_STEMMED,
    *_MARKUP,
    *_SEPARATORS,
    *_OUTSIDE_ASCII,
    *_SPACES_OUTSIDE_ASCII,
    *_LONG_RUNS,
]


def docs_of(name: str) -> list[SearchDoc]:
    tools = json.loads((CATALOGUES / f"{name}.json").read_text(encoding="utf-8"))
    exposed = assign_exposed_names((str(t["server"]), str(t["name"])) for t in tools)
    return [SearchDoc.from_tool(t["server"], t["name"], exposed[(t["server"], t["name"])], t) for t in tools]


def awkward_text(rng: random.Random) -> str:
    """Up to 14 of FRAGMENTS, joined by nothing, spaces or separators."""
    pieces = [rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 14))]
    return rng.choice(["", " ", "  ", "_", "-"]).join(pieces)
