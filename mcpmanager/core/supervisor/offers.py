"""Listing what a server offers besides tools (prompts, resources, resource templates), every page.

Only the kinds the server declared are asked for. Each kind's caching hints (`freshness`) are kept
beside it: the merged lists are cached no longer than their parts. A server whose prompts or resources cannot be
listed still serves its tools: the failure is noted in its log and that kind reads as empty.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcpmanager.core.supervisor.freshness import Freshness, merged, of_result

Listed = dict[str, Any]
PAGE_CAP = 1000  # a server whose cursor never ends must not hang us
# A page's items, the next cursor, and the page's result (its caching hints).
Page = tuple[list[BaseModel], str | None, BaseModel]


async def every_page(fetch: Callable[[str | None], Awaitable[Page]]) -> tuple[list[Listed], Freshness]:
    """All items of a paged list, as the JSON the server sent, and the list's caching hints (its
    least fresh page's)."""
    items: list[Listed] = []
    pages: list[Freshness] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        page, cursor, result = await fetch(cursor)
        items.extend(item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in page)
        pages.append(of_result(result))
        if not cursor:
            break
    return items, merged(pages)


async def _prompts(client: Client, cursor: str | None) -> Page:
    page = await client.list_prompts(cursor=cursor, cache_mode="bypass")
    return list(page.prompts), page.next_cursor, page


async def _resources(client: Client, cursor: str | None) -> Page:
    page = await client.list_resources(cursor=cursor, cache_mode="bypass")
    return list(page.resources), page.next_cursor, page


async def _templates(client: Client, cursor: str | None) -> Page:
    page = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
    return list(page.resource_templates), page.next_cursor, page


Lister = Callable[[Client, str | None], Awaitable[Page]]
KINDS: dict[str, Lister] = {"prompts": _prompts, "resources": _resources, "templates": _templates}


def offered_kinds(capabilities: types.ServerCapabilities) -> list[str]:
    kinds = []
    if capabilities.prompts is not None:
        kinds.append("prompts")
    if capabilities.resources is not None:
        kinds += ["resources", "templates"]
    return kinds


async def list_offers(
    client: Client, note: Callable[[str], None], freshness: dict[str, Freshness] | None = None
) -> dict[str, list[Listed]]:
    """{"prompts": [...], "resources": [...], "templates": [...]}: each kind the server declared
    (and into `freshness`, each listed kind's caching hints)."""
    found: dict[str, list[Listed]] = {kind: [] for kind in KINDS}
    for kind in offered_kinds(client.server_capabilities):
        lister = KINDS[kind]
        try:
            listed = await every_page(lambda cursor, lister=lister: lister(client, cursor))  # type: ignore[misc]
            found[kind] = listed[0]
            if freshness is not None:
                freshness[kind] = listed[1]
        except MCPError as exc:
            if exc.error.code != types.METHOD_NOT_FOUND:  # declared resources, has no templates: common
                note(f"listing {kind} failed: {exc}")
        except Exception as exc:  # a broken optional list must not take the server's tools down
            note(f"listing {kind} failed: {type(exc).__name__}: {exc}")
    return found
