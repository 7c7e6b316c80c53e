"""What mcpmanager advertises to its clients, from what its servers declared.

While any enabled server has not connected yet, what it might bring is advertised too: a client that
connects first (a stdio client starts mcpmanager and connects at once) must not lose what comes a
second later, and an empty list costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpmanager.core.catalogue import apps
from mcpmanager.core.supervisor.downstream import Downstream

ALL_KINDS = ("prompts", "resources", "completions", "logging")


def offered(servers: Iterable[Downstream]) -> frozenset[str]:
    """The kinds some enabled server declared (all of them while one has not connected)."""
    kinds: set[str] = set()
    for downstream in servers:
        if downstream.config.disabled:
            continue
        declared = downstream.declared
        if declared is None:
            return frozenset(ALL_KINDS)
        kinds.update(kind for kind in ALL_KINDS if getattr(declared, kind, None) is not None)
    return frozenset(kinds)


def extensions(servers: Iterable[Downstream]) -> dict[str, dict[str, Any]]:
    """Every extension an enabled server declared (the first server's settings, in config order), and
    MCP Apps while a server has not connected (mcpmanager carries it whatever the server)."""
    found: dict[str, dict[str, Any]] = {}
    for downstream in servers:
        if downstream.config.disabled:
            continue
        declared = downstream.declared
        if declared is None:
            found.setdefault(apps.EXTENSION, {})
            continue
        for identifier, settings in (declared.extensions or {}).items():
            found.setdefault(identifier, settings)
    return found
