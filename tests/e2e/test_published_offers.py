"""The published everything server's prompts, resources, templates and completions through
`mcpmanager serve --http`, read by the SDK's client in both protocol eras, next to a second server
(the conformance fixture) whose lists are merged with them."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from tests.helpers.clients import http_client
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.published import ERAS, Config
from tests.helpers.serving import serving_http

EVERYTHING_PROMPTS = {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}


async def prompt_names(client: Client) -> set[str]:
    return {p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts}


@pytest.mark.parametrize("era", ERAS)
async def test_everything_servers_prompts_and_resources_pass_through(
    published: Config, tmp_path: Path, era: str
) -> None:
    servers = {"everything": published["mcpServers"]["everything"], "conformance": conformance_fixture()}
    config = write_config(tmp_path / "cfg", servers, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served, http_client(served.url, served.token, era) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.resources is not None
        assert capabilities.completions is not None

        async def both_listed() -> bool:
            return EVERYTHING_PROMPTS | {"test_simple_prompt"} <= await prompt_names(client)

        await wait_for(both_listed, timeout=60, interval=0.2)

        prompt = await client.get_prompt("args-prompt", {"city": "Paris", "state": "IDF"})
        [message] = prompt.messages
        assert isinstance(message.content, types.TextContent) and "Paris, IDF" in message.content.text

        resources = (await client.list_resources(cache_mode="bypass")).resources
        uris = {str(r.uri) for r in resources}
        assert "demo://resource/static/document/architecture.md" in uris and "test://static-text" in uris
        templates = {
            t.uri_template for t in (await client.list_resource_templates(cache_mode="bypass")).resource_templates
        }
        assert {"demo://resource/dynamic/text/{resourceId}", "test://template/{id}/data"} <= templates

        # Routed by the URI: a listed one, and one only a template of the everything server matches.
        static = (await client.read_resource("demo://resource/static/document/architecture.md")).contents[0]
        assert isinstance(static, types.TextResourceContents) and static.text.strip()
        dynamic = (await client.read_resource("demo://resource/dynamic/text/7")).contents[0]
        assert isinstance(dynamic, types.TextResourceContents) and dynamic.text.startswith("Resource 7:")
        fixture_text = (await client.read_resource("test://template/42/data")).contents[0]
        assert isinstance(fixture_text, types.TextResourceContents) and '"id": "42"' in fixture_text.text

        completion = await client.complete(
            types.PromptReference(name="completable-prompt"), {"name": "department", "value": "E"}
        )
        assert completion.completion.values == ["Engineering"]
