"""Where a server's OAuth tokens and client registration live: the keyring, never a file of ours.

Two entries per server, JSON: `oauth/<server>/tokens` (the token response and its absolute expiry,
so an engine started later refreshes before using an expired token rather than after a 401) and
`oauth/<server>/client` (the registration this sign-in made, or none for a client from the config,
and the authorization server's revocation endpoint for sign-out). The keyring blocks (a D-Bus round
trip): every call runs in a worker thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from mcpmanager.core.vault.store import Vault


def tokens_name(server: str) -> str:
    return f"oauth/{server}/tokens"


def client_name(server: str) -> str:
    return f"oauth/{server}/client"


@dataclass(frozen=True)
class StoredTokens:
    token: OAuthToken
    expires_at: float | None  # seconds since the epoch; None: the server gave no lifetime


def read_tokens(vault: Vault, server: str) -> StoredTokens | None:
    record = _read(vault, tokens_name(server))
    try:
        token = OAuthToken.model_validate(record.get("token"))
    except ValidationError:
        return None  # nothing, or not ours: the server needs a sign-in
    expires = record.get("expires_at")
    return StoredTokens(token, float(expires) if isinstance(expires, int | float) else None)


def write_tokens(vault: Vault, server: str, token: OAuthToken) -> StoredTokens:
    expires = time.time() + int(token.expires_in) if token.expires_in is not None else None
    vault.set(tokens_name(server), json.dumps({"token": token.model_dump(mode="json"), "expires_at": expires}))
    return StoredTokens(token, expires)


def read_client(vault: Vault, server: str) -> tuple[OAuthClientInformationFull | None, dict[str, Any]]:
    """The registration made for `server` (None: none yet) and the whole record."""
    record = _read(vault, client_name(server))
    try:
        client = OAuthClientInformationFull.model_validate(record["client"]) if record.get("client") else None
    except ValidationError:
        client = None
    return client, record


def write_client(vault: Vault, server: str, **changes: Any) -> None:
    """Change keys of `server`'s client record (`client`, `revocation_endpoint`), keeping the rest."""
    _, record = read_client(vault, server)
    vault.set(client_name(server), json.dumps(record | changes))


def forget(vault: Vault, server: str, registration: bool = False) -> bool:
    """Remove `server`'s tokens (and its registration too); True when there were tokens."""
    had = vault.delete(tokens_name(server))
    if registration:
        vault.delete(client_name(server))
    return had


def _read(vault: Vault, name: str) -> dict[str, Any]:
    text = vault.get(name)
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


class VaultStorage:
    """The SDK's `TokenStorage` over the vault, for one server.

    `fixed_client` makes the config's client (it may read its secret from the keyring; then nothing
    is registered). `engine` marks the engine's use, where no sign-in can happen: with no
    registration yet it answers a stand-in, so an unauthorised server leads straight to the redirect
    (which the engine refuses) rather than to a registration the engine could not use."""

    def __init__(
        self,
        vault: Vault,
        server: str,
        fixed_client: Callable[[], OAuthClientInformationFull] | None,
        engine: bool,
    ) -> None:
        self.vault, self.server, self.fixed_client, self.engine = vault, server, fixed_client, engine
        self.expires_at: float | None = None

    async def get_tokens(self) -> OAuthToken | None:
        stored = await anyio.to_thread.run_sync(read_tokens, self.vault, self.server)
        self.expires_at = stored.expires_at if stored else None
        return stored.token if stored else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        stored = await anyio.to_thread.run_sync(write_tokens, self.vault, self.server, tokens)
        self.expires_at = stored.expires_at

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.fixed_client is not None:
            return await anyio.to_thread.run_sync(self.fixed_client)
        client, _ = await anyio.to_thread.run_sync(read_client, self.vault, self.server)
        if client is None and self.engine:
            return OAuthClientInformationFull(client_id="mcpmanager-not-registered", redirect_uris=None)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.fixed_client is None:
            client = client_info.model_dump(mode="json", exclude_none=True)
            await anyio.to_thread.run_sync(lambda: write_client(self.vault, self.server, client=client))
