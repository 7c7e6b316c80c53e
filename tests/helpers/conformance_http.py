"""ASGI wrappers around the conformance fixture's Streamable HTTP app."""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

# HTTP whitespace (OWS, RFC 9110 §5.6.3).
_OWS = b" \t"


def require_bearer(app: ASGIApp, token: str) -> ASGIApp:
    """Answer 401 to any HTTP request without `Authorization: Bearer TOKEN`.

    A static token, not OAuth: it only lets a test check that a client (the suite with its auth
    preload, or a proxy) really sends the header.
    """
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            refusal = PlainTextResponse("missing or wrong bearer token", 401, {"WWW-Authenticate": "Bearer"})
            await refusal(scope, receive, send)
            return
        await app(scope, receive, send)  # lifespan and authorised requests

    return guarded


def trim_header_values(app: ASGIApp) -> ASGIApp:
    """Drop the whitespace around every header value before the SDK reads it.

    RFC 9110 §5.5: a field value excludes its leading and trailing whitespace. uvicorn's
    httptools parser keeps it, and the SDK compares `Mcp-Name` with the body's name as it came
    (`mcp.shared.inbound.classify_inbound_request`, called by the 2026-07-28 HTTP handler in
    `mcp.server._streamable_http_modern.handle_modern_request`): `Mcp-Name:  test_simple_text `
    would be refused with -32020 (scenario http-header-validation).
    """

    async def trimmed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(name, value.strip(_OWS)) for name, value in scope["headers"]]
            scope = {**scope, "headers": headers}
        await app(scope, receive, send)

    return trimmed
