"""Which held prompt or resource template a client's request names (`pins`): a `prompts/get` of a
held prompt, and a read of a URI that only a held template would route, are refused with the
held item's reason rather than "unknown" (the user is told what changed and how to approve)."""

from __future__ import annotations

from collections.abc import Iterable

from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from mcpmanager.core.catalogue.pins import Held


def held_prompt(held: Iterable[Held], name: str) -> str | None:
    """Why `name` (a prompt's own name, or `server__name` as exposed on a clash) is withheld, or None."""
    for entry in held:
        if entry.kind == "prompt" and name in (entry.tool, f"{entry.server}__{entry.tool}"):
            return entry.refusal()
    return None


def held_templates_for(held: Iterable[Held], uri: str) -> list[Held]:
    """The held templates that match `uri` (their servers are not asked to read it through them)."""
    found = []
    for entry in held:
        if entry.kind != "template":
            continue
        try:
            if UriTemplate.parse(entry.tool).match(uri) is not None:
                found.append(entry)
        except (InvalidUriTemplate, ValueError):
            continue  # a template that routes nothing holds nothing back
    return found
