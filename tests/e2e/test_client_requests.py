"""What a server asks its client (sampling, elicitation in form and URL mode, roots) and what it logs,
through mcpmanager to a real SDK Client and back: over `serve --stdio`, `serve --http` and `connect`,
for a handshake-era and a 2026-07-28 client, in front of the conformance fixture server twice: as it
is (`conf`: mcpmanager speaks 2026-07-28 to it, so it asks through an InputRequiredResult) and
`--handshake-only` (`old`: an older server, which sends requests of its own).

Each test runs its round trip on both servers and compares both outcomes at once, so a failure shows
every pairing of eras that broke."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.helpers.asking_clients import (
    ERAS,
    TRANSPORTS,
    Answering,
    Proxy,
    http_engine,
    outcome,
    proxy_client,
    wait_for_tools,
)
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config

SERVERS = ["conf", "old"]  # the fixture in both eras, and handshake-only
FIXED = ["conf_fixed", "old_fixed"]  # the same two with "roots" in their config entries
CLIENT_ROOTS = ["file:///home/ada/alpha", "file:///home/ada/beta"]
SHARED_ROOT = "file:///srv/shared"
LOGGER = "conformance-server"  # the fixture's logger name
LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"]

pytestmark = pytest.mark.parametrize(("transport", "era"), [(t, e) for t in TRANSPORTS for e in ERAS])


def tools(name: str, servers: list[str] = SERVERS) -> set[str]:
    return {f"{server}__{name}" for server in servers}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """One config for every transport; one `serve --http` engine on it that `connect` reaches too."""
    folder = tmp_path_factory.mktemp("client-requests")
    configured = folder / "configured-root"
    servers = {
        "conf": conformance_fixture(),
        "old": conformance_fixture("--handshake-only"),
        "conf_fixed": conformance_fixture(roots=[str(configured), SHARED_ROOT]),
        "old_fixed": conformance_fixture("--handshake-only", roots=[str(configured), SHARED_ROOT]),
    }
    config = write_config(folder, servers, supervisor=FAST)
    with http_engine(config, folder / "home") as running:
        yield running


def configured_roots(proxy: Proxy) -> list[str]:
    return sorted([(proxy.config.parent / "configured-root").resolve().as_uri(), SHARED_ROOT])


async def test_sampling_is_answered_by_the_client_behind_the_call(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    answering = Answering()
    async with proxy_client(proxy, transport, era, tmp_path / "stdio", **answering.callbacks()) as client:
        await wait_for_tools(client, tools("test_sampling"))
        got = {s: await outcome(client, f"{s}__test_sampling", {"prompt": f"What is 6 x 7, {s}?"}) for s in SERVERS}
    assert got == {s: f"LLM response: {Answering.reply_to(f'What is 6 x 7, {s}?')}" for s in SERVERS}
    # The model was asked once per call, with the server's own request.
    assert sorted(answering.prompts) == sorted(f"What is 6 x 7, {s}?" for s in SERVERS)
    assert [p.max_tokens for p in answering.samples] == [100, 100]


async def test_elicitation_in_form_and_url_mode_reaches_the_person_behind_the_call(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    answering = Answering()
    async with proxy_client(proxy, transport, era, tmp_path / "stdio", **answering.callbacks()) as client:
        await wait_for_tools(client, tools("test_elicitation") | tools("test_elicitation_url"))
        forms = {s: await outcome(client, f"{s}__test_elicitation", {"message": f"Who are you, {s}?"}) for s in SERVERS}
        links = {
            s: await outcome(client, f"{s}__test_elicitation_url", {"url": f"https://example.com/{s}/sign-in"})
            for s in SERVERS
        }
    filled = json.dumps(Answering.FORM)
    assert forms == {s: f"User response: action=accept, content={filled}" for s in SERVERS}
    assert links == {s: "URL elicitation: action=accept" for s in SERVERS}
    assert sorted(p.message for p in answering.forms) == [f"Who are you, {s}?" for s in SERVERS]
    assert all(p.requested_schema["required"] == ["username", "email"] for p in answering.forms)
    assert sorted(p.url for p in answering.links) == [f"https://example.com/{s}/sign-in" for s in SERVERS]


async def test_roots_come_from_the_client_unless_the_config_names_them(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    answering = Answering(roots=CLIENT_ROOTS)
    async with proxy_client(proxy, transport, era, tmp_path / "stdio", **answering.callbacks()) as client:
        await wait_for_tools(client, tools("test_roots", SERVERS + FIXED))
        asked = {s: await outcome(client, f"{s}__test_roots", {}) for s in SERVERS}
        assert answering.roots_asked >= len(SERVERS)  # asked during the calls
        before = answering.roots_asked
        fixed = {s: await outcome(client, f"{s}__test_roots", {}) for s in FIXED}
    assert asked == {s: f"Roots: {json.dumps(CLIENT_ROOTS)}" for s in SERVERS}
    assert fixed == {s: f"Roots: {json.dumps(configured_roots(proxy))}" for s in FIXED}
    assert answering.roots_asked == before  # the configured roots win: the client is not asked


async def set_level(client: Client, level: types.LoggingLevel) -> None:
    """logging/setLevel (the SDK's set_logging_level helper warns: the request is gone in 2026-07-28)."""
    request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))
    await client.session.send_request(request, types.EmptyResult)


async def test_log_messages_reach_the_client_named_after_their_server(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    answering = Answering()
    # A modern client opts in to log messages per request (`log_level` stamps it on every one).
    options = {**answering.callbacks(), **({"log_level": "info"} if era != "legacy" else {})}
    async with proxy_client(proxy, transport, era, tmp_path / "stdio", **options) as client:
        await wait_for_tools(client, tools("test_tool_with_logging"))

        async def run_every_server(meta: types.RequestParamsMeta | None = None) -> None:
            for s in SERVERS:
                result = await client.call_tool(f"{s}__test_tool_with_logging", {}, meta=meta)
                assert not result.is_error, result

        # At a level above the messages' own (info), none may arrive...
        if era == "legacy":
            await set_level(client, "warning")
            await run_every_server()
            await set_level(client, "debug")
        else:
            await run_every_server(meta=cast(types.RequestParamsMeta, {types.LOG_LEVEL_META_KEY: "warning"}))
        # ...at or below it, each message once, named after its server.
        await run_every_server()
        expected = sorted(("info", f"{s}/{LOGGER}", line) for s in SERVERS for line in LOGGED)
        await wait_for(lambda: len(answering.logs) >= len(expected), timeout=10)
        # A message whose request has ended goes out on another stream (to every client): give any that
        # should not have been sent at all the time to show up.
        await anyio.sleep(0.3)
        heard = sorted((m.level, m.logger, m.data) for m in answering.logs)
    assert heard == expected


async def test_a_client_that_did_not_declare_sampling_gets_an_error_naming_it(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    answering = Answering()
    me = types.Implementation(name="forgetful-client", version="1.0")
    options = {**answering.callbacks(sampling=False), "client_info": me}
    async with proxy_client(proxy, transport, era, tmp_path / "stdio", **options) as client:
        await wait_for_tools(client, tools("test_sampling"))
        got = {s: await outcome(client, f"{s}__test_sampling", {"prompt": "anyone?"}) for s in SERVERS}
    # The 2026-07-28 server was told the calling client's capabilities, so it refuses by itself (its
    # own error result); the handshake-era server asked, was refused by mcpmanager with -32021
    # naming the client and what it lacks, and failed the call with that error, which reaches the
    # client as the JSON-RPC error it is.
    assert got["conf"] == "error: The client does not support sampling", got
    old = got["old"]
    assert old.startswith("raised MCPError: forgetful-client") and "did not declare sampling" in old, got
    assert answering.samples == []
