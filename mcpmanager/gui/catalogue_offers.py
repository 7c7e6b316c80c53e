"""What the catalogue lists besides tools: each server's prompts, resources and resource templates.

They are read from the engine's `Offerings`, which merges them for clients: a prompt has an exposed
name by the tools' rules (its own name, `server__name` on a clash); a resource keeps its URI and a
template its `uriTemplate`, listed once, for the first server in config order (the others in `also`).
An `Offer` is one of them as a catalogue row shows it; the spec stays the dict the server listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpmanager.core.catalogue.offerings import Offerings

TOOL, PROMPT, RESOURCE, TEMPLATE = "tool", "prompt", "resource", "template"
KINDS = (TOOL, PROMPT, RESOURCE, TEMPLATE)  # also the order of the Kind column when sorted
# What the kind filter offers; templates go with resources, as clients list them together.
GROUPS: dict[str, frozenset[str]] = {
    "tools": frozenset({TOOL}),
    "prompts": frozenset({PROMPT}),
    "resources": frozenset({RESOURCE, TEMPLATE}),
}
SINGULAR = {"tools": "tool", "prompts": "prompt", "resources": "resource"}


@dataclass(frozen=True)
class Offer:
    kind: str  # PROMPT, RESOURCE or TEMPLATE
    server: str
    shown: str  # what clients use: the prompt's exposed name, the URI, the URI template
    name: str  # the server's own name for it (a resource's `name` is only a label)
    spec: dict[str, Any]
    also: tuple[str, ...] = ()  # other servers that list the same URI or template

    @property
    def key(self) -> str:
        """What stays while it is renamed: a prompt's server and own name (its exposed name changes
        with clashes), a URI or template (its owner changes when a server goes). Joined by U+001F,
        which no tool key (`server:name`) contains."""
        if self.kind == PROMPT:
            return f"{PROMPT}\x1f{self.server}\x1f{self.name}"
        return f"{self.kind}\x1f{self.shown}"

    @property
    def description(self) -> str:
        return str(self.spec.get("description") or "")

    @property
    def title(self) -> str:
        return str(self.spec.get("title") or "")

    @property
    def mime_type(self) -> str:
        return str(self.spec.get("mimeType") or "")


def offers_of(offerings: Offerings) -> list[Offer]:
    """Every prompt, resource and template clients see, in that order (each kind in config order)."""
    offers = [Offer(PROMPT, p.server, p.exposed, p.name, p.spec) for p in offerings.prompts()]
    offers += [Offer(RESOURCE, r.server, r.uri, _label(r.spec), r.spec, r.also) for r in offerings.resources()]
    offers += [Offer(TEMPLATE, t.server, t.uri_template, _label(t.spec), t.spec, t.also) for t in offerings.templates()]
    return offers


def summary(offer: Offer) -> str:
    """What the Description column says: a resource's label first, as its URI may not say what it is."""
    if offer.kind == PROMPT:
        return offer.description
    label = offer.title or offer.name
    if label and offer.description and label not in offer.description:
        return f"{label} — {offer.description}"
    return offer.description or label


@dataclass(frozen=True)
class Argument:
    name: str
    required: bool
    description: str


def arguments(spec: dict[str, Any]) -> list[Argument]:
    """A prompt's arguments as it declared them (nothing is guessed for one it left malformed)."""
    declared = spec.get("arguments")
    if not isinstance(declared, list):
        return []
    return [
        Argument(str(a["name"]), a.get("required") is True, str(a.get("description") or ""))
        for a in declared
        if isinstance(a, dict) and a.get("name")
    ]


def arguments_text(spec: dict[str, Any]) -> str:
    """`city (required), state`: a prompt's arguments on one line."""
    return ", ".join(f"{a.name} (required)" if a.required else a.name for a in arguments(spec))


def searched(offer: Offer) -> str:
    """Everything the filter matches for an offer, in one string."""
    words = [offer.shown, offer.name, offer.title, offer.server, offer.mime_type, offer.description]
    words += [a.name for a in arguments(offer.spec)]
    return "\n".join(words)


def _label(spec: dict[str, Any]) -> str:
    return str(spec.get("name") or "")
