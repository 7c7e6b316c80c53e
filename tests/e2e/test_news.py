"""News between servers and clients through `mcpmanager serve --http`: a subscribed resource's update
and a changed resource list reach the client (a handshake-era client as notifications, a 2026-07-28
client on its listen stream), from a server in either era; a client's changed roots reach the
servers; and what mcpmanager advertises follows what its servers declare."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

from tests.helpers.asking_clients import ERAS, Answering, Proxy, http_engine, proxy_client, wait_for_tools
from tests.helpers.clients import http_client, text_of
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http

WATCHED = "test://watched-resource"
SERVERS = ["conf", "old"]  # the fixture as it is (2026-07-28 to mcpmanager) and handshake-only


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("news")
    servers = {"conf": conformance_fixture(), "old": conformance_fixture("--handshake-only")}
    config = write_config(folder / "cfg", servers, supervisor=FAST)
    with http_engine(config, folder / "home") as running:
        yield running


class Heard:
    """A handshake-era client's notifications, as its message handler receives them."""

    def __init__(self) -> None:
        self.messages: list[types.ServerNotification] = []

    async def __call__(self, message: IncomingMessage) -> None:
        if not isinstance(message, Exception):
            self.messages.append(message)

    def updated(self) -> list[str]:
        return [m.params.uri for m in self.messages if isinstance(m, types.ResourceUpdatedNotification)]

    def resources_changed(self) -> int:
        return sum(isinstance(m, types.ResourceListChangedNotification) for m in self.messages)


async def resource_uris(client: Client) -> set[str]:
    return {str(r.uri) for r in (await client.list_resources(cache_mode="bypass")).resources}


@pytest.mark.parametrize("server", SERVERS)
async def test_a_handshake_era_client_hears_of_updates_and_new_resources(
    proxy: Proxy, tmp_path: Path, server: str
) -> None:
    heard = Heard()
    async with proxy_client(proxy, "http", "legacy", tmp_path, message_handler=heard) as client:
        await wait_for_tools(client, {f"{s}__test_touch_resource" for s in SERVERS})
        # Once the subscribe is answered, the servers follow the URI (no waiting needed).
        await client.session.send_request(
            types.SubscribeRequest(params=types.SubscribeRequestParams(uri=WATCHED)), types.EmptyResult
        )
        told = text_of(await client.call_tool(f"{server}__test_touch_resource", {}))
        # A handshake-era server counts its subscribers (mcpmanager is one); a modern one publishes.
        assert "Told 1 subscriber(s)" in told or server == "conf", told
        await wait_for(lambda: heard.updated() == [WATCHED], timeout=10)

        before, changes = await resource_uris(client), heard.resources_changed()
        added = text_of(await client.call_tool(f"{server}__test_add_resource", {}))
        new_uri = added.removeprefix("Added ")
        assert new_uri.startswith("test://added-") and new_uri not in before
        await wait_for(lambda: heard.resources_changed() > changes, timeout=10)
        assert new_uri in await resource_uris(client)

        await client.session.send_request(
            types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=WATCHED)), types.EmptyResult
        )
        after = text_of(await client.call_tool(f"{server}__test_touch_resource", {}))
        assert "Told 0 subscriber(s)" in after or server == "conf", after  # a modern server just publishes
        await anyio.sleep(0.3)
        assert heard.updated() == [WATCHED]  # nothing more once unsubscribed


@pytest.mark.parametrize("server", SERVERS)
async def test_a_modern_client_hears_of_updates_and_new_resources_on_its_listen_stream(
    proxy: Proxy, tmp_path: Path, server: str
) -> None:
    async with proxy_client(proxy, "http", "auto", tmp_path) as client:
        await wait_for_tools(client, {f"{s}__test_touch_resource" for s in SERVERS})
        events: list[object] = []
        async with client.listen(resources_list_changed=True, resource_subscriptions=[WATCHED]) as subscription:

            async def collect() -> None:
                async for event in subscription:
                    events.append(event)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(collect)
                await client.call_tool(f"{server}__test_touch_resource", {})
                await wait_for(lambda: any(getattr(e, "uri", None) == WATCHED for e in events), timeout=10)
                await client.call_tool(f"{server}__test_add_resource", {})
                await wait_for(lambda: any(type(e).__name__ == "ResourcesListChanged" for e in events), timeout=10)
                tasks.cancel_scope.cancel()


async def test_a_clients_changed_roots_reach_the_servers(proxy: Proxy, tmp_path: Path) -> None:
    answering = Answering(roots=["file:///home/ada/alpha"])
    async with proxy_client(proxy, "http", "legacy", tmp_path, **answering.callbacks()) as client:
        await wait_for_tools(client, {"old__test_roots_changes"})
        before = text_of(await client.call_tool("old__test_roots_changes", {}))
        await client.session.send_notification(types.RootsListChangedNotification())

        async def counted_one_more() -> bool:
            now = text_of(await client.call_tool("old__test_roots_changes", {}))
            return now != before

        await wait_for(counted_one_more, timeout=10)


async def test_only_what_the_servers_declare_is_advertised(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"plain": fixture("--name", "plain")}, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served:
        async with http_client(served.url, served.token) as first:
            await wait_for_tools(first, {"echo"})  # the server has declared what it has by now
        for era in ERAS:
            async with http_client(served.url, served.token, era) as client:
                capabilities = client.server_capabilities
                assert capabilities.tools is not None
                assert capabilities.prompts is None and capabilities.resources is None, capabilities
                assert capabilities.completions is None and capabilities.logging is None, capabilities
