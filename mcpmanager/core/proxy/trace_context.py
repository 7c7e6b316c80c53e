"""W3C trace context as MCP carries it: `traceparent`, `tracestate` and `baggage` in a request's
`_meta`. A proxy is one hop of the client's trace, not a new trace: the client's keys go to the
server that gets the request exactly as the client wrote them (not re-encoded through OpenTelemetry,
which would rewrite or drop what it does not parse), and the server's keys in a result's `_meta`
come back to the client with the rest of its `_meta`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRACE_KEYS = ("traceparent", "tracestate", "baggage")


def trace_of(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The trace keys of a request's `_meta` (None: it has none, nearly every request)."""
    if not meta or ("traceparent" not in meta and "tracestate" not in meta and "baggage" not in meta):
        return None  # (asked on every call: three lookups, no dict built)
    return {key: meta[key] for key in TRACE_KEYS if key in meta}
