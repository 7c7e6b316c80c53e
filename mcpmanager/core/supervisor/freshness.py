"""How long a list or read result may be cached (`ttlMs`, `cacheScope`: 2026-07-28 requires both on
list and read results), as a server gave it and as mcpmanager merges it.

A server's answer counts as it was given: a 2026-07-28 server's own `ttlMs` and `cacheScope`; a
handshake-era server gives none, which reads as the spec reads a missing hint: immediately stale
(0) and not to be shared (private). A merged list is only as fresh as its least fresh part and only
as shareable as its least shareable part: the smallest TTL of the servers whose items went into
it, `public` only when every one of them said public. A list with no server's part (mcpmanager's
own meta-tools, an empty list) gets the default, 0 and private: mcpmanager's lists change at the
user's hand (an edited config, a server starting) and it cannot promise a client that does not
listen for changes that they will not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Scope = Literal["public", "private"]


@dataclass(frozen=True)
class Freshness:
    ttl_ms: int = 0
    scope: Scope = "private"

    def fields(self) -> dict[str, Any]:
        """As keyword arguments of a result model (`ttl_ms`, `cache_scope`)."""
        return {"ttl_ms": self.ttl_ms, "cache_scope": self.scope}


DEFAULT = Freshness()  # what a server that gave none counts as, and a list with no server's part


def of_result(result: Any) -> Freshness:
    """The hints on one result model the SDK's client parsed (none given: `DEFAULT`). The SDK drops
    them from a handshake-era session's results and defaults the fields, so only what the server set
    explicitly (`model_fields_set`) counts."""
    given: set[str] = getattr(result, "model_fields_set", set())
    ttl = getattr(result, "ttl_ms", 0) if "ttl_ms" in given else DEFAULT.ttl_ms
    scope = getattr(result, "cache_scope", "private") if "cache_scope" in given else DEFAULT.scope
    return Freshness(max(0, int(ttl)), "public" if scope == "public" else "private")


def merged(parts: Iterable[Freshness]) -> Freshness:
    """The hints of an answer made of `parts` (one per server, or one per page): the smallest TTL,
    public only when every part is; `DEFAULT` for no parts."""
    parts = list(parts)
    if not parts:
        return DEFAULT
    scope: Scope = "public" if all(p.scope == "public" for p in parts) else "private"
    return Freshness(min(p.ttl_ms for p in parts), scope)
