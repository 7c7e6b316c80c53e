"""Prompts, resources, resource templates and completion through mcpmanager, to a real SDK Client over
`serve --stdio`, `serve --http` and `connect`, in both client eras.

Three servers, in this config order: `zeta`, a small server of its own (below) that offers a prompt and
a resource URI the other two offer as well, with different contents; `conf`, the conformance fixture
server (mcpmanager speaks 2026-07-28 to it); and `old`, the same fixture `--handshake-only`. So every
conformance prompt clashes (listed as `server__name`, got back under its own name from its own
server), and `test://static-text` is offered three times: listed once and read from `zeta`, the first
in config order, though its name sorts last."""

from __future__ import annotations

import json
import sys
from base64 import b64decode
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers.asking_clients import ERAS, TRANSPORTS, Proxy, http_engine, proxy_client
from tests.helpers.conformance import conformance_fixture
from tests.helpers.conformance_tables import PNG
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config

ZETA_SERVER = '''\
"""zeta: a prompt and a resource the conformance servers offer too, with zeta's own contents."""
from mcp.server.mcpserver import MCPServer

server = MCPServer("zeta")


@server.resource("test://static-text", name="static-text", description="zeta's static text", mime_type="text/plain")
def static_text() -> str:
    return "zeta's own static text"


@server.prompt(description="zeta's simple prompt")
def test_simple_prompt() -> str:
    return "zeta's own simple prompt"


@server.prompt(description="A prompt only zeta has")
def greeting(name: str) -> str:
    return f"Hello from zeta, {name}!"


server.run()
'''

SERVERS = ["zeta", "conf", "old"]  # config order
CLASHING = ["test_simple_prompt"]  # all three
CONFORMANCE_PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
]
TEMPLATE = "test://template/{id}/data"

pytestmark = pytest.mark.parametrize(("transport", "era"), [(t, e) for t in TRANSPORTS for e in ERAS])


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    folder = tmp_path_factory.mktemp("passthrough")
    zeta = folder / "zeta_server.py"
    zeta.write_text(ZETA_SERVER, encoding="utf-8")
    servers: dict[str, Any] = {
        "zeta": {"command": sys.executable, "args": [str(zeta)]},
        "conf": conformance_fixture(),
        "old": conformance_fixture("--handshake-only"),
    }
    config = write_config(folder, servers, supervisor=FAST)
    with http_engine(config, folder / "home") as running:
        yield running


EVERY_PROMPT = {"greeting", "zeta__test_simple_prompt"} | {
    f"{server}__{name}" for server in ("conf", "old") for name in CONFORMANCE_PROMPTS
}


async def every_server_offers(client: Client) -> None:
    """Until the prompts of all three servers are merged (their lists arrive once each is ready)."""

    async def merged() -> bool:
        return {p.name for p in (await client.list_prompts()).prompts} >= EVERY_PROMPT

    await wait_for(merged, timeout=30)


def texts(result: types.GetPromptResult) -> list[str]:
    return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]


async def test_prompts_are_merged_and_got_from_their_own_server(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, era, tmp_path / "stdio") as client:
        await every_server_offers(client)
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        # A clashing name is listed once per server as server__name, never bare; a unique one bare.
        assert set(listed) == EVERY_PROMPT
        assert listed["zeta__test_simple_prompt"].description == "zeta's simple prompt"
        assert listed["conf__test_simple_prompt"].description == "A simple prompt without arguments"
        assert [a.name for a in listed["old__test_prompt_with_arguments"].arguments or []] == ["arg1", "arg2"]

        simple = {s: texts(await client.get_prompt(f"{s}__test_simple_prompt")) for s in SERVERS}
        assert simple == {
            "zeta": ["zeta's own simple prompt"],
            "conf": ["This is a simple prompt for testing."],
            "old": ["This is a simple prompt for testing."],
        }
        arguments = {"arg1": "paris", "arg2": "london"}
        with_arguments = {
            s: texts(await client.get_prompt(f"{s}__test_prompt_with_arguments", arguments)) for s in ("conf", "old")
        }
        said = "Prompt with arguments: arg1='paris', arg2='london'"
        assert with_arguments == {"conf": [said], "old": [said]}
        assert texts(await client.get_prompt("greeting", {"name": "Ada"})) == ["Hello from zeta, Ada!"]

        with pytest.raises(MCPError, match="Unknown prompt 'test_simple_prompt'"):
            await client.get_prompt("test_simple_prompt")  # only its exposed names are known


async def test_resources_are_listed_once_and_read_from_their_first_server(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, era, tmp_path / "stdio") as client:
        await every_server_offers(client)
        resources = (await client.list_resources()).resources
        uris = [str(r.uri) for r in resources]
        assert sorted(uris) == ["test://static-binary", "test://static-text", "test://watched-resource"]
        by_uri = {str(r.uri): r for r in resources}
        assert by_uri["test://static-text"].description == "zeta's static text"  # zeta's, first in config
        assert by_uri["test://static-binary"].description == "A static binary resource (PNG)"

        [text] = (await client.read_resource("test://static-text")).contents
        assert isinstance(text, types.TextResourceContents)
        assert text.text == "zeta's own static text"
        [binary] = (await client.read_resource("test://static-binary")).contents
        assert isinstance(binary, types.BlobResourceContents)
        assert (binary.mime_type, b64decode(binary.blob)) == ("image/png", b64decode(PNG))

        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [TEMPLATE]  # offered by conf and old: listed once
        [data] = (await client.read_resource("test://template/42/data")).contents
        assert isinstance(data, types.TextResourceContents)
        assert json.loads(data.text) == {"id": "42", "templateTest": True, "data": "Data for ID: 42"}

        # Nobody has it: the error of the first server asked (zeta, whose SDK says "Unknown resource").
        with pytest.raises(MCPError, match="Unknown resource: test://nowhere"):
            await client.read_resource("test://nowhere")


async def test_completion_reaches_the_server_of_the_prompt_or_template(
    proxy: Proxy, transport: str, era: str, tmp_path: Path
) -> None:
    async with proxy_client(proxy, transport, era, tmp_path / "stdio") as client:
        await every_server_offers(client)
        prompts = {
            s: (
                await client.complete(
                    types.PromptReference(name=f"{s}__test_prompt_with_arguments"), {"name": "arg1", "value": "pa"}
                )
            ).completion.values
            for s in ("conf", "old")
        }
        assert prompts == {"conf": ["paris", "park", "party"], "old": ["paris", "park", "party"]}
        template = await client.complete(types.ResourceTemplateReference(uri=TEMPLATE), {"name": "id", "value": "1"})
        assert template.completion.values == ["1", "123"]
