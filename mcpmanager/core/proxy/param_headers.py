"""`Mcp-Param-*` headers (SEP-2243): a tool's arguments annotated with `x-mcp-header` in its input
schema, mirrored into HTTP headers so that what sits between client and server can route on them.

mcpmanager lists the annotations as the server wrote them, so the client mirrors them to
mcpmanager (whose SDK server checks them against the body). When mcpmanager calls the tool on an
HTTP server, its own session mirrors the arguments again from the server's schema (encoded as the
SDK encodes them, base64 for what is not plain ASCII), since the arguments are what the server
checks its headers against. A `Mcp-Param-*` header the client sent that no annotation of the tool
accounts for is passed on as it came: mcpmanager does not know what it is for, and the server (or
something in front of it) may."""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

PREFIX = "mcp-param-"


def client_param_headers(ctx: ServerRequestContext[Any]) -> dict[str, str] | None:
    """The `Mcp-Param-*` headers of the client's HTTP request (None: none, or no HTTP request)."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return None
    found = {name: value for name, value in headers.items() if name.lower().startswith(PREFIX)}
    return found or None
