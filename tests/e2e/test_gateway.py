"""`mcpmanager serve --http --host …` as a team gateway, run as a user runs it: refused without TLS
and named tokens on a network address; with them, a real SDK client over TLS on this machine's own
network address; a revoked token refused from the next request, without a restart."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.gateway import (
    add_token,
    cli,
    gateway_client,
    listening,
    make_certificate,
    open_session,
    own_address,
    spawn_replica,
    status_of,
    stop,
)
from tests.helpers.serving import serving_http

ERAS = ["legacy", "auto"]


def test_a_network_address_is_refused_without_tls_or_named_tokens(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a")}, supervisor=FAST)
    cert, key = make_certificate(tmp_path / "tls", ["127.0.0.1"])
    tokens = tmp_path / "tokens.json"
    base = ["serve", "--http", "--config", str(config), "--port", "0"]
    home = tmp_path / "home"

    plain = cli(*base, "--host", "0.0.0.0", "--allow-host", "gw.example", home=home)
    assert plain.returncode == 2
    assert "it needs TLS (--tls-cert FILE --tls-key FILE" in plain.stderr
    assert "named tokens (--tokens FILE" in plain.stderr

    no_tokens = cli(*base, "--host", "0.0.0.0", "--tls-cert", str(cert), "--tls-key", str(key), home=home)
    assert no_tokens.returncode == 2
    assert "it needs named tokens" in no_tokens.stderr and "TLS" not in no_tokens.stderr

    tls = ["--tls-cert", str(cert), "--tls-key", str(key)]
    missing_file = cli(*base, "--host", "0.0.0.0", *tls, "--tokens", str(tokens), "--allow-host", "gw", home=home)
    assert missing_file.returncode == 2
    assert f"tokens file not found: {tokens}" in missing_file.stderr

    add_token(tokens, "alice")
    wildcard = cli(*base, "--host", "0.0.0.0", *tls, "--tokens", str(tokens), home=home)
    assert wildcard.returncode == 2
    assert "--allow-host NAME" in wildcard.stderr

    swapped_pair = ["--tls-cert", str(key), "--tls-key", str(cert)]
    swapped = cli(*base, "--host", "0.0.0.0", *swapped_pair, "--tokens", str(tokens), "--allow-host", "gw", home=home)
    assert swapped.returncode == 2
    assert f"cannot load the TLS certificate {key}" in swapped.stderr
    # Refused before anything started: no server was launched, nothing was advertised.
    assert not (home / "run" / "engines").exists() or not list((home / "run" / "engines").iterdir())


def test_tokens_are_kept_as_digests_and_listed_by_name(tmp_path: Path) -> None:
    tokens = tmp_path / "team" / "tokens.json"
    alice = add_token(tokens, "alice")
    add_token(tokens, "bob")
    stored = tokens.read_text()
    assert alice not in stored  # only the digest is kept
    assert tokens.stat().st_mode & 0o777 == 0o600
    assert [e["name"] for e in json.loads(stored)["tokens"]] == ["alice", "bob"]
    listed = cli("tokens", "list", "--file", str(tokens))
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["alice", "bob"]
    again = cli("tokens", "add", "alice", "--file", str(tokens))
    assert again.returncode == 2 and "'alice' already has a token" in again.stderr
    unknown = cli("tokens", "revoke", "carol", "--file", str(tokens))
    assert (
        unknown.returncode == 2
        and "no token named 'carol'" in unknown.stderr
        and "(named: alice, bob)" in unknown.stderr
    )


@pytest.mark.parametrize("era", ERAS)
async def test_a_gateway_on_a_network_address_serves_tls_and_honours_revocation(tmp_path: Path, era: str) -> None:
    address = own_address()
    config = write_config(tmp_path, {"a": fixture("--name", "a"), "b": fixture("--name", "b")}, supervisor=FAST)
    cert, key = make_certificate(tmp_path / "tls", [address, "127.0.0.1"])
    tokens = tmp_path / "tokens.json"
    alice, bob = add_token(tokens, "alice"), add_token(tokens, "bob")
    # Every address: the non-loopback bind, reached by this machine's own network address.
    flags = ["--host", "0.0.0.0", "--port", "0", "--tls-cert", str(cert), "--tls-key", str(key)]
    flags += ["--tokens", str(tokens), "--allow-host", address]
    replica = await listening(spawn_replica(config, tmp_path / "home", flags))
    try:
        assert replica.url.startswith(f"https://{address}:")
        async with gateway_client(replica.url, alice, era, cert) as client:
            await _wait_for_tool(client, "a__echo")
            result = await client.call_tool("a__echo", {"text": "over TLS"})
            assert text_of(result) == "over TLS"
            failed = await client.call_tool("a__fail", {"message": "invalid key abc-SECRETISH-123"})
            assert failed.is_error

        assert status_of(replica.url, None, cert) == 401
        assert status_of(replica.url, "not-a-token", cert) == 401
        assert status_of(replica.url, alice, cert, host="elsewhere.example") == 421
        assert status_of(replica.url, alice, cert) not in (401, 421)
        # A page on someone's own localhost is not one of the gateway's pages; its own name is.
        assert status_of(replica.url, alice, cert, origin="http://localhost:3000") == 403
        assert status_of(replica.url, alice, cert, origin=f"https://{address}") not in (401, 403, 421)
        if era == "legacy":
            # A session belongs to the token that opened it: bob holding alice's session id gets
            # what anyone would for an unknown session.
            session = open_session(replica.url, alice, cert)
            assert status_of(replica.url, alice, cert, session=session) == 200
            assert status_of(replica.url, bob, cert, session=session) == 404
        with pytest.raises(httpx2.ConnectError):  # the certificate is checked: an unknown one is refused
            status_of(replica.url, alice, None)
        with pytest.raises(httpx2.HTTPError):  # TLS only: plain HTTP to the port gets no answer
            status_of(replica.url.replace("https://", "http://"), alice, cert)

        revoked = cli("tokens", "revoke", "alice", "--file", str(tokens))
        assert revoked.returncode == 0, revoked.stderr
        assert status_of(replica.url, alice, cert) == 401  # from the next request, no restart
        async with gateway_client(replica.url, bob, era, cert) as client:
            result = await client.call_tool("b__echo", {"text": "bob still"})
            assert text_of(result) == "bob still"
        # The audit trail: each call logged with the name of the token that made it, never the token.
        await wait_for(lambda: "bob called b:echo: ok" in replica.log(), timeout=10)
        assert "alice called a:echo: ok" in replica.log()
        assert "alice called a:fail: error" in replica.log()
        assert "SECRETISH" not in replica.log()  # an error's text may echo a key: not logged
        assert alice not in replica.log() and bob not in replica.log()
    finally:
        await stop(replica)


async def test_healthz_answers_without_a_token_and_says_nothing_else(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a")}, supervisor=FAST)
    async with serving_http(config, home) as served:
        base = served.url.removesuffix("/mcp")
        with httpx2.Client(timeout=10) as http:
            answer = http.get(f"{base}/healthz", headers={"Host": "10.1.2.3:8443"})
        assert (answer.status_code, answer.text) == (200, "ok\n")
        assert status_of(served.url, None) == 401


async def _wait_for_tool(client: Client, name: str) -> None:
    async def present() -> bool:
        return name in {t.name for t in (await client.list_tools()).tools}

    await wait_for(present, timeout=30)
