"""Following a modern-era (2026-07-28) server's changes on its `subscriptions/listen` stream.

Such a server announces changed lists and updated resources only on that stream, and the stream's
filter names the subscribed resources: when the subscription set changes, a new stream replaces
the old one. (Handshake-era servers send the same news as plain notifications instead.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from mcp import Client
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated, ToolsListChanged

logger = logging.getLogger(__name__)

# A list_changed storm costs one refetch: wait for this much quiet, but no longer than the cap.
STORM_QUIET = 0.05
STORM_CAP = 0.5


@dataclass(frozen=True)
class Changes:
    """What to do on each kind of news."""

    tools: Callable[[], None]
    offers: Callable[[], None]  # prompts or resources (the list) changed
    updated: Callable[[str], None]  # a subscribed resource changed
    listening: Callable[[frozenset[str]], None]  # a stream is open, following these resources


async def listen_for_changes(
    client: Client, subscriptions: Callable[[], list[str]], relisten: asyncio.Event, changes: Changes
) -> None:
    """Listen until cancelled; `relisten` set means the subscription set changed."""
    first = True
    while True:
        relisten.clear()
        async with anyio.create_task_group() as tg:

            async def restart_on_change() -> None:
                await relisten.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(restart_on_change)
            try:
                await _listen_once(client, subscriptions(), changes, catch_up=first)
            except Exception as exc:  # a server without listen support still works, it just can't notify
                logger.debug("listen stream ended: %s", exc)
            first = False
            await relisten.wait()


async def _listen_once(client: Client, uris: list[str], changes: Changes, catch_up: bool = False) -> None:
    """`catch_up`: the connection's first stream. The server announces changes only to a stream
    that is open, and the lists were read before this one was: a change made in between (a server
    that adds a tool right after it started) was told to nobody, so the lists are read again once
    the stream stands."""
    capabilities = client.server_capabilities
    resources = capabilities.resources is not None
    async with client.listen(
        tools_list_changed=True,
        prompts_list_changed=capabilities.prompts is not None,
        resources_list_changed=resources,
        resource_subscriptions=uris if resources else (),
    ) as subscription:
        changes.listening(frozenset(uris if resources else ()))  # the server acknowledged the filter
        if catch_up:
            changes.tools()
            changes.offers()
        async for event in subscription:
            if isinstance(event, ToolsListChanged):
                changes.tools()
            elif isinstance(event, PromptsListChanged | ResourcesListChanged):
                changes.offers()
            elif isinstance(event, ResourceUpdated):
                changes.updated(event.uri)


async def after_the_storm(changed: asyncio.Event) -> None:
    """Return once `changed` was set and then stayed quiet for a moment (or the cap ran out), with it
    cleared: a server announcing 50 changes in a row gets one tools/list, not 50."""
    await changed.wait()
    deadline = anyio.current_time() + STORM_CAP
    while True:
        changed.clear()
        quiet = min(STORM_QUIET, deadline - anyio.current_time())
        if quiet <= 0:
            return
        with anyio.move_on_after(quiet) as waited:
            await changed.wait()
        if waited.cancelled_caught:
            return
