"""A loopback OAuth authorization server and the MCP server it protects, in one process (the SDK's
server-side auth pieces: its routes, handlers and bearer middleware, with an in-memory provider).

    python -m tests.helpers.oauth_server [--token-lifetime SECONDS] [--client ID SECRET REDIRECT_URI]

It listens on a free port of 127.0.0.1 and prints `ready http://127.0.0.1:PORT` once it accepts
connections. The MCP endpoint is `/mcp` (Streamable HTTP; `/sse` for SSE), behind a bearer token;
discovery (protected-resource and authorization-server metadata), dynamic client registration and
revocation are on; `--client` registers one client beforehand (a confidential one, with its one
redirect URI), as a provider's developer console would. The authorization endpoint approves at
once: it redirects back with a code, so any user agent that follows redirects completes a sign-in.
`GET /counters` (no token needed) says how many registrations, authorizations, code exchanges,
refreshes and revocations it has seen, and which access and refresh tokens it issued (so a test can
look for them where they must not be).
"""

from __future__ import annotations

import argparse
import gc
import secrets
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_SSE_METADATA = "/.well-known/oauth-protected-resource/sse"
_ROOT = Path(__file__).resolve().parent.parent.parent


class ApprovingProvider:
    """Every authorization is approved at once; tokens are random and live `lifetime` seconds."""

    def __init__(self, lifetime: int) -> None:
        self.lifetime = lifetime
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.counts: Counter[str] = Counter()
        self.issued: list[str] = []  # every access and refresh token ever issued

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.counts["registrations"] += 1
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.counts["authorizations"] += 1
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        found = self.codes.get(authorization_code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.counts["code_exchanges"] += 1
        self.codes.pop(authorization_code.code, None)
        return self._issue(authorization_code.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.counts["refreshes"] += 1
        self.refresh.pop(refresh_token.token, None)  # rotated: the old one is spent
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.load_access_token(token)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "identity assertions are not taken here")

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.counts["revocations"] += 1
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.issued += [access, refresh]
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def build(base: str, lifetime: int, client: list[str] | None = None) -> tuple[Starlette, ApprovingProvider]:
    provider = ApprovingProvider(lifetime)
    if client:
        client_id, secret, redirect_uri = client
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post",
        )

    def protected(path: str) -> MCPServer:
        auth = AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=f"{base}{path}",  # type: ignore[arg-type]
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["notes"]),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=[],
        )
        server: MCPServer = MCPServer("protected-notes", auth_server_provider=provider, auth=auth)

        @server.tool()
        def whoami() -> str:
            """Say that the caller got through."""
            return "signed in"

        return server

    http_app = protected("/mcp").streamable_http_app(host="127.0.0.1")
    sse_app = protected("/sse").sse_app(host="127.0.0.1")

    async def counters(request: Request) -> Response:
        return JSONResponse({**provider.counts, "issued": provider.issued})

    # The Streamable HTTP app carries the authorization server's routes and the session manager.
    routes = [Route("/counters", counters), *http_app.routes]
    routes += [r for r in sse_app.routes if getattr(r, "path", "").startswith(("/sse", "/messages", _SSE_METADATA))]
    app = Starlette(routes=routes, middleware=http_app.user_middleware, lifespan=http_app.router.lifespan_context)
    return app, provider


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-lifetime", type=int, default=3600, help="seconds an access token lives")
    parser.add_argument("--client", nargs=3, metavar=("ID", "SECRET", "REDIRECT_URI"), help="a registered client")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app, _provider = build(base, args.token_lifetime, args.client)
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def announce() -> None:
        while not http.started:  # `ready` once the socket accepts connections
            await anyio.sleep(0.02)
        print(f"ready {base}", flush=True)

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(announce)
            await http.serve(sockets=[sock])

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends


# For the tests: the server as a subprocess, and a user agent that completes its sign-ins. ----------


@dataclass
class Protected:
    process: subprocess.Popen[bytes]
    base: str  # http://127.0.0.1:PORT; the MCP endpoints are BASE/mcp and BASE/sse

    async def counters(self) -> dict[str, Any]:
        async with httpx2.AsyncClient() as http:
            found: dict[str, Any] = (await http.get(f"{self.base}/counters")).json()
        return found


@asynccontextmanager
async def protected_server(token_lifetime: int = 3600, *flags: str) -> AsyncIterator[Protected]:
    """The authorization server and its protected MCP server as a real subprocess on 127.0.0.1."""
    process = _spawn(token_lifetime, *flags)
    try:
        assert process.stdout is not None
        line = await anyio.to_thread.run_sync(process.stdout.readline)
        assert line.startswith(b"ready "), f"the OAuth server did not start: {line!r}"
        yield Protected(process, line.split()[1].decode())
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _spawn(token_lifetime: int, *flags: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.helpers.oauth_server", "--token-lifetime", str(token_lifetime), *flags]
    return subprocess.Popen(command, stdout=subprocess.PIPE, cwd=_ROOT)


async def follow(url: str) -> None:
    """A user agent at the authorization page: follows every redirect, back to the loopback."""
    async with httpx2.AsyncClient(follow_redirects=True) as http:
        answer = await http.get(url)
    assert answer.status_code == 200, answer.text


AGENT = """#!{python}
import sys, httpx2
with open({visits!r}, "a") as visits:
    visits.write(sys.argv[1] + "\\n")
answer = httpx2.get(sys.argv[1], follow_redirects=True)
sys.exit(0 if answer.status_code == 200 else 1)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def browser_script(folder: Path, works: bool = True) -> Path:
    """An executable to name in $BROWSER: a scripted user agent that follows the URL it is given
    (each URL noted in `folder/visits`), or one that cannot open anything."""
    path = folder / ("agent" if works else "no-browser")
    visits = str(folder / "visits")
    path.write_text(AGENT.format(python=sys.executable, visits=visits) if works else "#!/bin/sh\nexit 1\n")
    path.chmod(0o755)
    return path
