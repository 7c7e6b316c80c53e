"""Who may talk to the endpoint: processes of this machine that hold the token, not web pages.

The engine listens on 127.0.0.1 only, but a web page in the user's browser can still send requests
there (and DNS rebinding can make a foreign name point at it). So every request must name the host
it was sent to as a loopback address (else 421), must not come from a foreign web origin (else 403),
and must carry the bearer token (else 401). The order matters: a page that fails the first two
learns nothing, not even whether a token is wanted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcpmanager.core.serve.bearer_token import matches

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _host_name(value: str) -> str:
    """`127.0.0.1:8765` → `127.0.0.1`, `[::1]:8765` → `[::1]`."""
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if ":" in value else value


def loopback_host(value: str | None) -> bool:
    return value is not None and _host_name(value.strip().lower()) in LOOPBACK_HOSTS


def local_origin(value: str | None) -> bool:
    """No Origin (not a browser) or a page served from this machine's loopback."""
    if value is None:
        return True
    scheme, _, rest = value.strip().lower().partition("://")
    return scheme in ("http", "https") and _host_name(rest.rstrip("/")) in LOOPBACK_HOSTS


class LocalGuard:
    """ASGI middleware: Host, then Origin, then the bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not loopback_host(headers.get("host")):
            await _refuse(send, 421, "mcpmanager answers only requests sent to 127.0.0.1 or localhost")
            return
        if not local_origin(headers.get("origin")):
            await _refuse(send, 403, "mcpmanager does not answer web pages of other origins")
            return
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not presented or not matches(presented.strip(), self.token):
            extra = [(b"www-authenticate", b'Bearer realm="mcpmanager"')]
            message = "mcpmanager needs its bearer token (the token file `mcpmanager status` names)"
            await _refuse(send, 401, message, extra)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
