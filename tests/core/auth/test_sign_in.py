"""Signing in against a real authorization server (the SDK's, on loopback, as a subprocess): the
flow, where the tokens go, the kept redirect port, sign-out with revocation, and the engine's side
(it never registers or redirects; a stored token past its expiry is refreshed before use)."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import httpx2
import mcp_types as types
import pytest

from mcpmanager.core.auth.loopback import SignInFailed
from mcpmanager.core.auth.provider import SignInNeeded
from mcpmanager.core.auth.sign_in import sign_in, sign_out
from mcpmanager.core.auth.storage import client_name, read_client, read_tokens, tokens_name
from mcpmanager.core.config.servers import HttpServerConfig, OAuthSettings
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.vault.store import Vault
from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.oauth_server import Protected, follow, free_port, protected_server

SETTINGS = SupervisorSettings(start_timeout=10, backoff_initial=0.05, starting_wait=2, stop_grace=0.5)


@pytest.fixture
async def server() -> Protected:  # type: ignore[misc]
    async with protected_server() as running:
        yield running


def remote(server: Protected, transport: str = "http", **changes: object) -> HttpServerConfig:
    path = "/sse" if transport == "sse" else "/mcp"
    return replace(HttpServerConfig("notes", server.base + path, transport=transport), **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_sign_in_stores_tokens_in_the_keyring_and_the_server_comes_up(server: Protected, transport: str) -> None:
    vault = Vault()
    config = remote(server, transport)
    opened: list[str] = []

    async def agent(url: str) -> None:
        opened.append(url)
        await follow(url)

    await sign_in(config, vault, agent)
    assert len(opened) == 1 and "code_challenge_method=S256" in opened[0] and "state=" in opened[0]
    stored = read_tokens(vault, "notes")
    assert stored is not None and stored.token.access_token in (await server.counters())["issued"]
    assert stored.expires_at is not None and abs(stored.expires_at - (time.time() + 3600)) < 60
    events: list[object] = []
    downstream = Downstream(config, SETTINGS, None, events.append)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY, timeout=20)
        assert text_of(await downstream.call_tool("whoami", {})) == "signed in"  # type: ignore[arg-type]
    finally:
        await downstream.stop()


async def test_a_second_sign_in_reuses_the_registration_and_its_redirect_port(server: Protected) -> None:
    vault, config = Vault(), remote(server)
    await sign_in(config, vault, follow)
    first, _ = read_client(vault, "notes")
    await sign_in(config, vault, follow)
    again, _ = read_client(vault, "notes")
    assert first is not None and again is not None and again.client_id == first.client_id
    assert again.redirect_uris == first.redirect_uris
    assert (await server.counters())["registrations"] == 1


async def test_sign_out_revokes_at_the_server_and_forgets_the_tokens(server: Protected) -> None:
    vault, config = Vault(), remote(server)
    await sign_in(config, vault, follow)
    done = await sign_out(config, vault)
    assert done.had_tokens and done.revoked
    assert (await server.counters())["revocations"] == 2  # the refresh token and the access token
    assert vault.get(tokens_name("notes")) is None
    assert not (await sign_out(config, vault)).had_tokens


async def test_the_engine_never_registers_or_redirects_it_waits_for_a_sign_in(server: Protected) -> None:
    downstream = Downstream(remote(server), SETTINGS, None, lambda _event: None)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.NEEDS_SIGN_IN, timeout=20)
        assert "mcpmanager login notes" in downstream.status.reason
        refused = await downstream.call_tool("whoami", {})
        assert isinstance(refused, types.CallToolResult)
        assert refused.is_error and "needs you to sign in" in text_of(refused)
        assert downstream.status.retry_in is None  # no restart loop
    finally:
        await downstream.stop()
    counters = await server.counters()
    assert "registrations" not in counters and "authorizations" not in counters
    assert Vault().get(client_name("notes")) is None


async def test_a_restarted_engine_refreshes_an_expired_token_before_using_it(server: Protected) -> None:
    vault, config = Vault(), remote(server)
    await sign_in(config, vault, follow)
    record = json.loads(vault.get(tokens_name("notes")) or "")
    vault.set(tokens_name("notes"), json.dumps(record | {"expires_at": time.time() - 1}))  # expired meanwhile
    downstream = Downstream(config, SETTINGS, None, lambda _event: None)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY, timeout=20)
    finally:
        await downstream.stop()
    counters = await server.counters()
    assert counters["refreshes"] == 1 and counters["authorizations"] == 1
    assert read_tokens(vault, "notes").token.access_token != record["token"]["access_token"]  # type: ignore[union-attr]


async def test_a_fixed_authorization_header_is_not_signed_in_to(server: Protected) -> None:
    config = remote(server, headers={"Authorization": "Bearer static"})
    with pytest.raises(SignInFailed, match="fixed Authorization header"):
        await sign_in(config, Vault(), follow)


async def test_a_client_from_the_config_signs_in_on_its_redirect_port_and_is_never_registered() -> None:
    port = free_port()
    flags = ("--client", "console-app", "s3cret-from-console", f"http://127.0.0.1:{port}/callback")
    vault = Vault()
    vault.set("notes-client-secret", "s3cret-from-console")
    oauth = OAuthSettings("console-app", "${keyring:notes-client-secret}", ("notes",), redirect_port=port)
    async with protected_server(3600, *flags) as server:
        await sign_in(remote(server, oauth=oauth), vault, follow)
        counters = await server.counters()
        assert "registrations" not in counters and counters["code_exchanges"] == 1
        assert read_client(vault, "notes")[0] is None  # the config's client is not copied to the keyring
        assert (await sign_out(remote(server, oauth=oauth), vault)).revoked  # revoking needs its secret


async def test_a_refused_refresh_while_up_turns_the_server_to_needs_sign_in() -> None:
    async with protected_server(token_lifetime=2) as server:
        vault, config = Vault(), remote(server)
        await sign_in(config, vault, follow)
        downstream = Downstream(config, SETTINGS, None, lambda _event: None)
        downstream.start()
        try:
            await wait_for(lambda: downstream.status.state is State.READY, timeout=20)
            client, record = read_client(vault, "notes")
            refresh = read_tokens(vault, "notes").token.refresh_token  # type: ignore[union-attr]
            async with httpx2.AsyncClient() as http:  # revoked elsewhere (another device signed out)
                data = {"token": refresh, "client_id": client.client_id, "client_secret": ""}  # type: ignore[union-attr]
                assert (await http.post(record["revocation_endpoint"], data=data)).status_code == 200
            expiry = time.time() + 2.5
            await wait_for(lambda: time.time() > expiry, timeout=10)
            refused = await downstream.call_tool("whoami", {})
            assert isinstance(refused, types.CallToolResult)
            assert refused.is_error and "mcpmanager login notes" in text_of(refused)
            assert downstream.status.state is State.NEEDS_SIGN_IN
        finally:
            await downstream.stop()


def test_the_sign_in_reason_reads_the_same_in_a_window_and_a_terminal() -> None:
    # The window shows the reason as plain text: markdown backticks would show as they are.
    reason = str(SignInNeeded("tracker"))
    assert "mcpmanager login tracker" in reason and "`" not in reason
