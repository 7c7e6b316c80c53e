"""What servers offer besides tools: prompts, resources and resource templates, merged for clients.

Like tools, each is kept as the JSON dict its server listed, so it passes through exactly.

* **Prompts** get exposed names by the tools' rules (`exposed_names`): their own name when only one
  server has it, `server__name` on a clash, valid characters, the length limit. A client's
  `prompts/get` and a completion for a prompt come back to the server under its own name.
* **Resources** keep their URIs exactly as the server wrote them: a URI is an address the server
  also hands out in tool results and links, so renaming it would break every such link. A URI that
  several servers list is listed once, for the first of them in config order (its *owner*); reading
  it tries the owner first and then the others (`servers_for_uri`).
* **Resource templates** likewise keep their `uriTemplate`; a template several servers list is
  listed once, for the first. A URI nobody listed is routed to the servers whose template matches
  it, then to every server with resources (the first that can read it answers).
* **`ui://` resources** (MCP Apps) that several servers use, in their tools' `_meta.ui` or in their
  lists, are the exception: each server's is listed under a URI qualified by the server (`apps`),
  since the same `ui://` URI of two servers is two different pages, each for its own server's tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from mcpmanager.core.catalogue import apps
from mcpmanager.core.catalogue.exposed_names import DEFAULT_MAX_LENGTH, assign_exposed_names
from mcpmanager.core.signals import Signal

Listed = dict[str, Any]


@dataclass(frozen=True)
class ServerOffers:
    """One server's lists as it last sent them (empty for a kind it does not offer)."""

    prompts: tuple[Listed, ...] = ()
    resources: tuple[Listed, ...] = ()
    templates: tuple[Listed, ...] = ()


@dataclass(frozen=True)
class Prompt:
    server: str
    name: str  # the server's own name
    exposed: str  # the name clients see
    spec: Listed

    def exposed_spec(self) -> Listed:
        return {**self.spec, "name": self.exposed}


@dataclass(frozen=True)
class Resource:
    server: str
    spec: Listed
    also: tuple[str, ...] = ()  # other servers that list the same URI (after the owner)

    @property
    def uri(self) -> str:
        return str(self.spec.get("uri", ""))


@dataclass(frozen=True)
class Template:
    server: str
    spec: Listed
    also: tuple[str, ...] = ()
    parsed: UriTemplate | None = field(default=None, compare=False)

    @property
    def uri_template(self) -> str:
        return str(self.spec.get("uriTemplate", ""))


class Offerings:
    def __init__(self, max_name_length: int = DEFAULT_MAX_LENGTH) -> None:
        self.max_name_length = max_name_length
        self._offers: dict[str, ServerOffers] = {}
        self._servers: list[str] = []
        self._prompts: list[Prompt] = []
        self._by_exposed: dict[str, Prompt] = {}
        self._resources: list[Resource] = []
        self._by_uri: dict[str, Resource] = {}
        self._templates: list[Template] = []
        self.generation = 0
        # The `ui://` URIs tools of several servers name (the catalogue's: `Catalogue.shared_ui_uris`).
        self.shared_ui: Callable[[], frozenset[str]] = frozenset
        # Which lists changed: a subset of {"prompts", "resources"} (templates count as resources).
        self.changed: Signal[frozenset[str]] = Signal("offerings changed")

    # Reading --------------------------------------------------------------------------------------

    def prompts(self) -> list[Prompt]:
        return list(self._prompts)

    def prompt(self, exposed: str) -> Prompt | None:
        return self._by_exposed.get(exposed)

    def resources(self) -> list[Resource]:
        return list(self._resources)

    def templates(self) -> list[Template]:
        return list(self._templates)

    def template(self, uri_template: str) -> Template | None:
        return next((t for t in self._templates if t.uri_template == uri_template), None)

    def server_offers(self, server: str) -> ServerOffers | None:
        return self._offers.get(server)

    def kinds(self) -> frozenset[str]:
        """What some enabled server offers now: a subset of {"prompts", "resources"}."""
        kinds = set()
        if self._prompts:
            kinds.add("prompts")
        if self._resources or self._templates:
            kinds.add("resources")
        return frozenset(kinds)

    def owners_of(self, uri: str) -> list[str]:
        """The servers that list `uri` (owner first), then those with a template that matches it."""
        order: list[str] = []
        listed = self._by_uri.get(uri)
        if listed is not None:
            order += [listed.server, *listed.also]
        for template in self._templates:
            if template.parsed is not None and _matches(template.parsed, uri):
                order += [template.server, *template.also]
        return list(dict.fromkeys(order))

    def servers_for_uri(self, uri: str) -> list[str]:
        """The servers to ask for `uri`, in order: its owners (`owners_of`), then every other server
        that offers resources."""
        order = self.owners_of(uri)
        for server in self._servers:
            offers = self._offers.get(server)
            if offers is not None and (offers.resources or offers.templates):
                order.append(server)
        return list(dict.fromkeys(order))

    # Changing -------------------------------------------------------------------------------------

    def configure(self, servers: Iterable[str]) -> None:
        """Which servers are enabled, in config order (the first of several holders owns a URI)."""
        self._servers = list(servers)
        self._rebuild()

    def set_offers(self, server: str, offers: ServerOffers) -> None:
        self._offers[server] = offers
        self._rebuild()

    def forget(self, server: str) -> None:
        if self._offers.pop(server, None) is not None:
            self._rebuild()

    def refresh(self) -> None:
        """Merge again: the tools' shared `ui://` URIs changed."""
        self._rebuild()

    def _rebuild(self) -> None:
        enabled = _apart([(s, self._offers[s]) for s in self._servers if s in self._offers], self.shared_ui())
        prompts = _merge_prompts(enabled, self.max_name_length)
        resources = _first_holders(enabled, "resources", "uri")
        templates = _first_holders(enabled, "templates", "uriTemplate")
        changed = set()
        if prompts != self._prompts:
            changed.add("prompts")
        new_resources = [Resource(s, spec, also) for s, spec, also in resources]
        new_templates = [Template(s, spec, also, _parse(spec)) for s, spec, also in templates]
        if new_resources != self._resources or new_templates != self._templates:
            changed.add("resources")
        if not changed:
            return
        self._prompts = prompts
        self._by_exposed = {p.exposed: p for p in prompts}
        self._resources = new_resources
        self._by_uri = {r.uri: r for r in new_resources}
        self._templates = new_templates
        self.generation += 1
        self.changed.emit(frozenset(changed))


def _apart(enabled: list[tuple[str, ServerOffers]], shared: frozenset[str]) -> list[tuple[str, ServerOffers]]:
    """Each server's `ui://` resources that another server uses too (listed, or named by tools:
    `shared`) under the URI qualified by its server (`apps.qualified`)."""
    listed = apps.shared_uris(
        (server, uri)
        for server, offers in enabled
        for spec in offers.resources
        if isinstance(uri := spec.get("uri"), str) and uri.startswith("ui://")
    )
    shared = shared | listed
    if not shared:
        return enabled
    return [
        (
            server,
            ServerOffers(
                offers.prompts,
                tuple(
                    {**spec, "uri": apps.qualified(server, spec["uri"])} if spec.get("uri") in shared else spec
                    for spec in offers.resources
                ),
                offers.templates,
            ),
        )
        for server, offers in enabled
    ]


def _merge_prompts(enabled: list[tuple[str, ServerOffers]], max_length: int) -> list[Prompt]:
    pairs = [
        (server, str(spec.get("name", "")), spec)
        for server, offers in enabled
        for spec in offers.prompts
        if spec.get("name")
    ]
    pairs = list({(s, n): (s, n, spec) for s, n, spec in pairs}.values())  # a repeated name: the last
    names = assign_exposed_names(((s, n) for s, n, _ in pairs), max_length)
    return [Prompt(s, n, names[(s, n)], spec) for s, n, spec in pairs]


def _first_holders(
    enabled: list[tuple[str, ServerOffers]], kind: str, key: str
) -> list[tuple[str, Listed, tuple[str, ...]]]:
    """Every distinct `key` (a URI or a template) once, for its first server; the others in `also`."""
    first: dict[str, tuple[str, Listed]] = {}
    others: dict[str, list[str]] = {}
    for server, offers in enabled:
        for spec in getattr(offers, kind):
            value = spec.get(key)
            if not isinstance(value, str) or not value:
                continue
            if value not in first:
                first[value] = (server, spec)
            elif first[value][0] != server:
                others.setdefault(value, []).append(server)
    return [(server, spec, tuple(others.get(value, ()))) for value, (server, spec) in first.items()]


def _parse(spec: Mapping[str, Any]) -> UriTemplate | None:
    try:
        return UriTemplate.parse(str(spec.get("uriTemplate", "")))
    except (InvalidUriTemplate, ValueError):
        return None  # still listed as the server wrote it; it just routes nothing


def _matches(template: UriTemplate, uri: str) -> bool:
    try:
        return template.match(uri) is not None
    except ValueError:
        return False
