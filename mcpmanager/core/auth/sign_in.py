"""Signing in to a remote server and out again: what `mcpmanager login`/`logout` and the window's
Sign in and Sign out buttons run.

A sign-in listens on 127.0.0.1 for the redirect, lets the SDK's flow discover the authorization
server, register mcpmanager (or use the config's client), send the browser to the authorization
page with PKCE and a state, and exchange the code; the tokens go to the keyring. The redirect port
is kept with the registration, since an authorization server may insist on the exact redirect URI
it registered: the next sign-in listens on it again, or registers anew when it is taken.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError, OAuthTokenError
from mcp.client.auth.exceptions import OAuthRegistrationError

from mcpmanager.core.auth.loopback import Loopback, SignInFailed
from mcpmanager.core.auth.provider import provider, uses_oauth
from mcpmanager.core.auth.storage import forget, read_client, read_tokens, write_client
from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.sdk_compat import mcp_http_client
from mcpmanager.core.vault.store import Vault, VaultError

Opener = Callable[[str], Awaitable[None]]  # shows the authorization page to the user
SIGN_IN_TIMEOUT = 300.0  # seconds for the user to finish in the browser
_REFUSED = (401, 403)

__all__ = ["SIGN_IN_TIMEOUT", "Opener", "SignInFailed", "SignedOut", "sign_in", "sign_out"]


async def sign_in(config: HttpServerConfig, vault: Vault, open_url: Opener, timeout: float = SIGN_IN_TIMEOUT) -> None:
    """Sign in to `config` (its `${keyring:…}` references filled); raises `SignInFailed` saying why."""
    if not uses_oauth(config):
        raise SignInFailed(
            f"'{config.name}' is given a fixed Authorization header in the config; it is not signed in to"
        )
    name = config.name
    fixed_port = config.oauth.redirect_port if config.oauth else None
    registered, _ = await anyio.to_thread.run_sync(read_client, vault, name)
    port = fixed_port or _port_of(registered.redirect_uris if registered else None)
    try:
        loopback = await Loopback(port).__aenter__()
    except OSError as exc:
        if fixed_port:
            raise SignInFailed(f"cannot listen for the redirect on 127.0.0.1:{port} (redirectPort): {exc}") from None
        loopback = await Loopback(0).__aenter__()
    try:
        if registered is not None and loopback.port != port:
            await anyio.to_thread.run_sync(lambda: write_client(vault, name, client=None))  # register anew
        await anyio.to_thread.run_sync(forget, vault, name)  # a sign-in starts afresh
        auth = provider(config, vault, loopback.redirect_uri, open_url, loopback.result)
        status = await _authorised_request(config, auth, timeout)
        if status in _REFUSED:
            raise SignInFailed(f"'{name}' still refuses mcpmanager after signing in (HTTP {status})")
        if await anyio.to_thread.run_sync(read_tokens, vault, name) is None:
            raise SignInFailed(f"'{name}' did not ask for a sign-in (it answered HTTP {status} without one)")
        metadata = auth.context.oauth_metadata
        revocation = str(metadata.revocation_endpoint) if metadata and metadata.revocation_endpoint else None
        await anyio.to_thread.run_sync(lambda: write_client(vault, name, revocation_endpoint=revocation))
    except VaultError as exc:
        raise SignInFailed(str(exc)) from None
    finally:
        await loopback.__aexit__(None, None, None)


async def _authorised_request(config: HttpServerConfig, auth: httpx2.Auth, timeout: float) -> int:
    """One request to the server that it must authorise: its 401 starts the SDK's flow, which retries
    it once signed in. Only the status is read (an SSE stream or a listen stream is left at once)."""
    try:
        async with mcp_http_client(headers=dict(config.headers), auth=auth) as http:
            with anyio.fail_after(timeout):
                async with http.stream("GET", config.url, headers={"Accept": "text/event-stream"}) as response:
                    return response.status_code
    except TimeoutError:
        raise SignInFailed(f"the sign-in was not finished within {timeout:g} s") from None
    except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError) as exc:
        raise SignInFailed(f"signing in to '{config.name}' failed: {exc}") from None
    except httpx2.HTTPError as exc:
        raise SignInFailed(f"cannot reach '{config.name}' at {config.url}: {type(exc).__name__}: {exc}") from None


@dataclass(frozen=True)
class SignedOut:
    had_tokens: bool
    revoked: bool  # the authorization server was told to revoke them (if it offers revocation)


async def sign_out(config: HttpServerConfig, vault: Vault) -> SignedOut:
    """Forget `config`'s tokens, asking the authorization server to revoke them first when it
    advertised revocation (best effort: the tokens are forgotten either way)."""
    stored = await anyio.to_thread.run_sync(read_tokens, vault, config.name)
    _, record = await anyio.to_thread.run_sync(read_client, vault, config.name)
    endpoint = record.get("revocation_endpoint")
    revoked = False
    if stored is not None and isinstance(endpoint, str):
        client = await provider(config, vault).context.storage.get_client_info()
        tokens = [t for t in (stored.token.refresh_token, stored.token.access_token) if t]
        if client is not None and client.redirect_uris is not None:  # not the engine's stand-in
            revoked = await _revoke(endpoint, tokens, client.client_id or "", client.client_secret)
    had = await anyio.to_thread.run_sync(forget, vault, config.name)
    return SignedOut(had, revoked)


async def _revoke(endpoint: str, tokens: list[str], client_id: str, secret: str | None) -> bool:
    revoked = True
    async with mcp_http_client() as http:
        for token in tokens:  # RFC 7009: one token per request
            data = {"token": token, "client_id": client_id, "client_secret": secret}
            try:
                answer = await http.post(endpoint, data={k: v for k, v in data.items() if v is not None})
                if answer.status_code == 400 and secret is None:
                    # The SDK's own authorization server wants the field even from a public client.
                    answer = await http.post(endpoint, data={**data, "client_secret": ""})
                revoked = revoked and answer.status_code == 200
            except httpx2.HTTPError:
                revoked = False
    return revoked


def _port_of(redirect_uris: object) -> int:
    """The port of a registration's loopback redirect URI (0: none yet, any free one)."""
    for uri in redirect_uris if isinstance(redirect_uris, list) else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return 0
