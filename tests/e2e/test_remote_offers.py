"""A remote (Streamable HTTP) server behind mcpmanager: its prompts, resources and completions, what
it asks the client (sampling), and what it logs reach a client of `serve --http` in both eras."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from tests.e2e.test_http import unused_port
from tests.helpers.asking_clients import ERAS, Answering
from tests.helpers.clients import http_client, text_of
from tests.helpers.conformance import fixture_over_http
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.serving import serving_http


@pytest.mark.parametrize("era", ERAS)
async def test_a_remote_servers_prompts_resources_questions_and_logs_pass_through(tmp_path: Path, era: str) -> None:
    async with fixture_over_http(unused_port(), tmp_path / "fixture.log") as remote_url:
        config = write_config(tmp_path / "cfg", {"remote": {"type": "http", "url": remote_url}}, supervisor=FAST)
        answering = Answering()
        options = {**answering.callbacks(), "log_level": "info"} if era == "auto" else answering.callbacks()
        async with (
            serving_http(config, tmp_path / "home") as served,
            http_client(served.url, served.token, era, **options) as client,
        ):

            async def ready() -> bool:
                return "test_sampling" in {t.name for t in (await client.list_tools()).tools}

            await wait_for(ready, timeout=30)
            prompts = {p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts}
            assert "test_prompt_with_arguments" in prompts
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a1", "arg2": "a2"})
            assert "arg1='a1'" in str(got.messages[0].content)
            read = (await client.read_resource("test://template/9/data")).contents[0]
            assert isinstance(read, types.TextResourceContents) and '"id": "9"' in read.text
            completion = await client.complete(
                types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": ""}
            )
            assert completion.completion.values  # the fixture offers values for arg1

            sampled = await client.call_tool("test_sampling", {"prompt": "over the wire"})
            assert text_of(sampled) == f"LLM response: {Answering.reply_to('over the wire')}"
            if era == "legacy":
                await client.session.send_request(
                    types.SetLevelRequest(params=types.SetLevelRequestParams(level="debug")), types.EmptyResult
                )
            await client.call_tool("test_tool_with_logging", {})
            await wait_for(lambda: len(answering.logs) >= 3, timeout=10)
            assert {log.logger for log in answering.logs} == {"remote/conformance-server"}
