"""The catalogue table's columns and rows: what each row shows, sorts and is searched by.

A row is a tool (a core `ToolEntry`, with its settings) or something else a server offers (an
`Offer`: a prompt, a resource, a resource template). Everything a row shows is computed once per
change of what it holds, so painting and filtering 20,000 rows stays cheap; a tool's token size is
computed lazily, when its row is first shown or sorted by it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.catalogue.catalogue import ToolEntry
from mcpmanager.core.proxy.token_count import tool_tokens
from mcpmanager.gui.catalogue_offers import KINDS, PROMPT, TOOL, Offer, arguments_text, searched, summary

NAME, KIND, SERVER, DESCRIPTION, ALWAYS_ON, ENABLED, ALIASES, TOKENS = range(8)
HEADERS = ("Name", "Kind", "Server", "Description", "Always on", "Enabled", "Aliases", "Tokens")
HEADER_TIPS = (
    "The name clients use: a tool's or prompt's exposed name (a disabled tool shows its server's own "
    "name), a resource's URI, a template's URI template",
    "Tool, prompt, resource or resource template",
    "The server that provides it",
    "The first line of its description (hover for all of it)",
    "Listed to clients at once, without a search (discovery mode; tools only)",
    "Offered to clients at all (tools only)",
    "Other names that call it (tools only)",
    "Estimated tokens it costs in a client's tools/list (tools only)",
)
_DESCRIPTION_CHARS = 240  # a longer first line is only elided when painted, at a cost per paint
_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}


@dataclass(slots=True)
class Row:
    key: str
    kind: str
    server: str
    shown: str  # the exposed name (the server's own while a tool is disabled), a URI, a URI template
    line: str  # the description's first line, shortened
    aliases: str
    haystack: str  # everything the filter searches, casefolded
    entry: ToolEntry | None = None  # a tool
    offer: Offer | None = None  # anything else
    tokens: int = -1  # a tool's, computed on first use: json.dumps of 20,000 schemas takes ~0.4 s

    @property
    def enabled(self) -> bool:
        return self.entry is None or not self.entry.settings.disabled

    @property
    def always_on(self) -> bool:
        return self.entry is not None and self.entry.settings.always_on


Item = ToolEntry | Offer  # what a row is made from


def first_line(text: str) -> str:
    text = text.lstrip()
    end = text.find("\n")
    line = " ".join((text if end < 0 else text[:end])[: _DESCRIPTION_CHARS + 1].split())
    return line if len(line) <= _DESCRIPTION_CHARS else line[: _DESCRIPTION_CHARS - 1] + "…"


def make_row(key: str, item: Item, previous: Row | None) -> Row:
    if isinstance(item, Offer):
        haystack = searched(item).casefold()
        return Row(key, item.kind, item.server, item.shown, first_line(summary(item)), "", haystack, offer=item)
    shown = item.exposed or item.name
    aliases = ", ".join(item.settings.aliases)
    tokens = -1
    old = previous.entry if previous is not None else None
    if previous is not None and old is not None and old.spec is item.spec and previous.shown == shown:
        tokens = previous.tokens  # the schema did not change: neither did its size
    description = item.description
    haystack = "\n".join((shown, item.name, item.server, aliases, description)).casefold()
    return Row(key, TOOL, item.server, shown, first_line(description), aliases, haystack, entry=item, tokens=tokens)


def same(a: Item, b: Item) -> bool:
    if isinstance(a, ToolEntry) and isinstance(b, ToolEntry):
        # Identity first: the catalogue hands out the same spec dicts until a server lists anew.
        return (
            a.exposed == b.exposed
            and a.settings == b.settings
            and a.cached == b.cached
            and (a.spec is b.spec or a.spec == b.spec)
        )
    return a == b


def tokens(row: Row) -> int:
    """A tool's size in a client's tools/list; -1 for anything else (not listed there)."""
    entry = row.entry
    if row.tokens < 0 and entry is not None:
        row.tokens = tool_tokens({**entry.spec, "name": entry.exposed} if entry.exposed else entry.spec)
    return row.tokens


def sort_key(column: int) -> Callable[[Row], Any]:
    if column == NAME:
        return lambda r: r.shown.casefold()
    if column == KIND:
        return lambda r: _KIND_ORDER.get(r.kind, len(KINDS))
    if column == SERVER:
        return lambda r: r.server.casefold()
    if column == DESCRIPTION:
        return lambda r: r.line.casefold()
    if column == ALWAYS_ON:
        return lambda r: r.always_on
    if column == ENABLED:
        return lambda r: r.enabled
    if column == ALIASES:
        return lambda r: r.aliases.casefold()
    return tokens


def tooltip(row: Row, column: int) -> str | None:
    entry = row.entry
    if entry is None:
        return None if column in (ALWAYS_ON, ENABLED, ALIASES, TOKENS) else _offer_tooltip(row)
    if column == TOKENS:
        return f"About {tokens(row):,} tokens when a client lists it"
    if column == ALWAYS_ON:
        return "Listed to clients at once, without a search" if entry.settings.always_on else "Found by a search"
    if column == ENABLED:
        return "Offered to clients" if row.enabled else "Disabled: not offered to clients"
    lines = [f"<b>{html.escape(row.shown)}</b> · tool of {html.escape(entry.server)}"]
    if entry.exposed and entry.exposed != entry.name:
        lines.append(f"The server calls it {html.escape(entry.name)}")
    if not row.enabled:
        lines.append("<i>Disabled: not offered to clients</i>")
    if entry.cached:
        lines.append(f"<i>From the cache: {html.escape(entry.server)} has not listed its tools in this run yet</i>")
    if entry.description:
        lines.append(html.escape(entry.description).replace("\n", "<br>"))
    return "<qt>" + "<br>".join(lines) + "</qt>"  # rich text: Qt wraps long descriptions


def _offer_tooltip(row: Row) -> str:
    offer = row.offer
    assert offer is not None
    lines = [f"<b>{html.escape(row.shown)}</b> · {offer.kind} of {html.escape(offer.server)}"]
    if offer.kind == PROMPT and offer.name != offer.shown:
        lines.append(f"The server calls it {html.escape(offer.name)}")
    if offer.kind != PROMPT and (offer.title or offer.name):
        lines.append(html.escape(offer.title or offer.name))
    if offer.mime_type:
        lines.append(f"MIME type {html.escape(offer.mime_type)}")
    if offer.kind == PROMPT and (text := arguments_text(offer.spec)):
        lines.append(f"Arguments: {html.escape(text)}")
    if offer.also:
        lines.append(f"Also listed by {html.escape(', '.join(offer.also))}")
    if offer.description:
        lines.append(html.escape(offer.description).replace("\n", "<br>"))
    return "<qt>" + "<br>".join(lines) + "</qt>"
