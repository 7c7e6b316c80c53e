"""The client's trace context for the server's request (`proxy/trace_context.py`)."""

from __future__ import annotations

from mcpmanager.core.proxy.trace_context import trace_of


def test_only_the_trace_keys_are_taken_as_they_are() -> None:
    meta = {
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "a=1, b=2",  # as written, spaces and all
        "baggage": "k=v",
        "progressToken": 7,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    }
    assert trace_of(meta) == {k: meta[k] for k in ("traceparent", "tracestate", "baggage")}
    assert trace_of({"baggage": "only"}) == {"baggage": "only"}


def test_a_request_without_trace_keys_has_none() -> None:
    assert trace_of(None) is None
    assert trace_of({}) is None
    assert trace_of({"progressToken": 1}) is None
