"""Header values with the whitespace around them taken off, before anything reads them.

RFC 9110 §5.5: a field value excludes the optional whitespace (spaces, tabs) before and after it.
uvicorn's httptools parser keeps it, and the SDK compares the 2026-07-28 routing headers
(`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) and the `Mcp-Param-*` ones with the body as they
are, so `Mcp-Name:  echo ` was refused (400, -32020 "mcp-name header does not match"). Every
header is trimmed, since the rule is HTTP's and not MCP's (a bearer token with a trailing space is
the same token). A request whose headers need nothing (nearly all) is passed on untouched.
"""

from __future__ import annotations

from mcpmanager.core.serve.guard import ASGIApp, Receive, Scope, Send

_OWS = b" \t"


def trimmed_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]] | None:
    """`headers` with every value trimmed, or None when none needs it."""
    for _, value in headers:
        if value != value.strip(_OWS):  # (in C: a third of what testing each end in Python costs)
            return [(name, value.strip(_OWS)) for name, value in headers]
    return None


class TrimmedHeaders:
    """ASGI: the app sees each request's header values trimmed (RFC 9110 §5.5)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (headers := trimmed_headers(scope["headers"])) is not None:
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
