"""Who may talk to the endpoint: holders of a token, sending to a name the endpoint answers to, and
not web pages of other sites.

On this machine the engine listens on 127.0.0.1 only, but a web page in the user's browser can
still send requests there (and DNS rebinding can make a foreign name point at it). So every request
must name a host the endpoint answers to (loopback names; a team gateway adds its own address and
its `--allow-host` names) else 421, must not come from a foreign web origin else 403, and must carry
a bearer token the `Admission` knows else 401. The order matters: a page that fails the first two
learns nothing, not even whether a token is wanted.

`/healthz` is answered before any check, with "ok" and nothing else: load balancers and Kubernetes
probe it by address, with no token.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from mcpmanager.core.proxy.activity import CALLER_KEY
from mcpmanager.core.serve.bearer_token import matches

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
HEALTH_PATH = "/healthz"


@dataclass(frozen=True)
class Admission:
    """What the guard lets in: the host names requests may be sent to, and whose tokens they carry."""

    hosts: frozenset[str]
    who: Callable[[str], str | None]  # a presented token → the name it belongs to, or None
    missing: str  # the 401's text: where a token comes from
    misdirected: str = "mcpmanager does not answer requests sent to this host name"
    named: bool = True  # tokens are people's: each call is recorded and logged with the name
    origins: frozenset[str] | None = None  # the names a web page may come from (None: `hosts`)


def local_admission(token: str) -> Admission:
    """This machine's engine: loopback names, the runtime directory's one token."""
    return Admission(
        frozenset(LOOPBACK_HOSTS),
        lambda presented: "local" if matches(presented, token) else None,
        "mcpmanager needs its bearer token (the token file `mcpmanager status` names)",
        "mcpmanager answers only requests sent to 127.0.0.1 or localhost",
        named=False,
    )


def host_name(value: str) -> str:
    """`127.0.0.1:8765` → `127.0.0.1`, `[::1]:8765` → `[::1]`, lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if ":" in value else value


def loopback_host(value: str | None) -> bool:
    return value is not None and host_name(value) in LOOPBACK_HOSTS


def allowed_origin(value: str | None, hosts: frozenset[str]) -> bool:
    """No Origin (not a browser), or a page served from one of the endpoint's own names."""
    if value is None:
        return True
    scheme, _, rest = value.strip().lower().partition("://")
    return scheme in ("http", "https") and host_name(rest.rstrip("/")) in hosts


class Guard:
    """ASGI middleware: Host, then Origin, then the bearer token."""

    def __init__(self, app: ASGIApp, admission: Admission) -> None:
        self.app = app
        self.admission = admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no route speaks it: refused before any check can be probed
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        if scope.get("path") == HEALTH_PATH:
            await _answer(send, 200, "ok")
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        hosts = self.admission.hosts
        host = headers.get("host")
        if host is None or host_name(host) not in hosts:
            await _answer(send, 421, self.admission.misdirected)
            return
        if not allowed_origin(
            headers.get("origin"), hosts if self.admission.origins is None else self.admission.origins
        ):
            await _answer(send, 403, "mcpmanager does not answer web pages of other origins")
            return
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        caller = self.admission.who(presented.strip()) if scheme.lower() == "bearer" and presented.strip() else None
        if caller is None:
            extra = [(b"www-authenticate", b'Bearer realm="mcpmanager"')]
            await _answer(send, 401, self.admission.missing, extra)
            return
        if self.admission.named:
            scope.setdefault("state", {})[CALLER_KEY] = caller
            # The SDK binds a session to the principal that opened it: another person's token that
            # learnt the session id gets "Session not found", as if there were none.
            scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=caller, scopes=[]))
        await self.app(scope, receive, send)


async def _answer(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
