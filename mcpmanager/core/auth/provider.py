"""The SDK's OAuth client (`OAuthClientProvider`: discovery, registration, PKCE, refresh) set up for
one remote server, in the engine or in a sign-in.

In the engine no browser is ever opened: when the server wants a sign-in, the redirect step raises
`SignInNeeded`, and the server waits for the user (`mcpmanager login`, the window's Sign in).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import httpx2
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from mcpmanager.core.auth.storage import VaultStorage
from mcpmanager.core.config.servers import HttpServerConfig
from mcpmanager.core.sdk_compat import OAuthProvider
from mcpmanager.core.vault.references import filled
from mcpmanager.core.vault.store import Vault

CALLBACK = "/callback"
_ANY_PORT = "http://127.0.0.1" + CALLBACK  # what the engine's (never used) redirect URI says


class SignInNeeded(Exception):
    """The server wants the user to sign in; only `mcpmanager login` or the window can do that."""

    def __init__(self, server: str) -> None:
        # No backticks: the window shows this text as it is, as the terminal does.
        super().__init__(f"sign in: run 'mcpmanager login {server}', or the window's Sign in button")
        self.server = server


def _not_sign_in_needed(record: logging.LogRecord) -> bool:
    """The SDK logs every failed flow with its traceback; a server waiting for a sign-in is no error."""
    return not (record.exc_info and isinstance(record.exc_info[1], SignInNeeded))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_not_sign_in_needed)


def uses_oauth(config: HttpServerConfig) -> bool:
    """A server given a fixed Authorization header is not signed in to."""
    return not any(key.lower() == "authorization" for key in config.headers)


def provider(
    config: HttpServerConfig,
    vault: Vault,
    redirect_uri: str | None = None,
    open_url: Callable[[str], Awaitable[None]] | None = None,
    callback: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
) -> OAuthProvider:
    """The engine's provider (no `redirect_uri`: it refuses to redirect), or a sign-in's."""
    engine = redirect_uri is None
    uri = redirect_uri or _ANY_PORT
    oauth = config.oauth
    scope = " ".join(oauth.scopes) if oauth and oauth.scopes else None
    fixed: Callable[[], OAuthClientInformationFull] | None = None
    if oauth is not None and oauth.client_id:
        client_id, secret_text = oauth.client_id, oauth.client_secret

        def fixed() -> OAuthClientInformationFull:
            secret = filled(secret_text, vault, f"{config.name}: oauth clientSecret") if secret_text else None
            return OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=[uri],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post" if secret else "none",
            )

    metadata = OAuthClientMetadata(
        client_name="mcpmanager",
        redirect_uris=[uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )

    async def refuse(_url: str) -> None:
        found = made.context
        if found.protected_resource_metadata is None and found.oauth_metadata is None:
            # A 401 with no OAuth behind it (a missing API key header): a failure to fix, no sign-in.
            raise OAuthFlowError(f"{config.url} refused mcpmanager (HTTP 401) and offers no OAuth sign-in")
        raise SignInNeeded(config.name)

    async def no_callback() -> AuthorizationCodeResult:
        raise SignInNeeded(config.name)

    storage = VaultStorage(vault, config.name, fixed, engine)
    redirect, back = (refuse, no_callback) if engine else (open_url, callback)
    made = OAuthProvider(config.url, metadata, storage, redirect, back, lambda: storage.expires_at)
    return made


def engine_auth(config: HttpServerConfig, vault: Vault) -> httpx2.Auth | None:
    """What the engine's connection to `config` authenticates with (None: its headers do)."""
    return provider(config, vault) if uses_oauth(config) else None
