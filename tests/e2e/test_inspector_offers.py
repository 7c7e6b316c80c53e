"""The MCP Inspector CLI (published on npm), a client other than the SDK's, reads prompts and
resources through mcpmanager: through `connect` and over HTTP with the token, from the published
everything server and the conformance fixture side by side."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_inspector_connect import inspector
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import engines, stop_engines, wait_for
from tests.helpers.fixture_servers import FAST
from tests.helpers.published import Config

pytestmark = [pytest.mark.published, pytest.mark.timeout(180, func_only=True)]


def parsed(status: int, out: str) -> dict[str, Any]:
    assert status == 0, out
    document: dict[str, Any] = json.loads(out)
    return document


async def test_the_inspector_lists_gets_and_reads_through_connect_and_http(published: Config, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    servers = {"everything": published["mcpServers"]["everything"], "conformance": conformance_fixture()}
    (home / "config.json").write_text(json.dumps({"mcpServers": servers, "supervisor": FAST}), encoding="utf-8")
    scratch = tmp_path / "inspector"
    connect = [sys.executable, "-m", "mcpmanager", "connect", "--mode", "direct"]
    env = ["-e", f"MCPMANAGER_HOME={home}", "-e", f"PATH={os.environ.get('PATH', '')}"]
    try:
        listed: dict[str, Any] = {}

        async def both_servers_prompts() -> bool:
            listed.update(parsed(*await inspector(scratch, connect, *env, "--method", "prompts/list")))
            names = {prompt["name"] for prompt in listed["prompts"]}
            return {"args-prompt", "test_simple_prompt"} <= names

        await wait_for(both_servers_prompts, timeout=90, interval=0.5)

        got = parsed(
            *await inspector(
                scratch,
                connect,
                *env,
                "--method",
                "prompts/get",
                "--prompt-name",
                "args-prompt",
                "--prompt-args",
                "city=Lyon",
                "state=ARA",
            )
        )
        assert "Lyon, ARA" in json.dumps(got["messages"])

        [engine] = engines(home)
        token = Path(engine["token_file"]).read_text(encoding="ascii").strip()
        direct = [str(engine["urls"]["direct"]), "--transport", "http", "--header", f"Authorization: Bearer {token}"]
        resources = parsed(*await inspector(scratch, direct, "--method", "resources/list"))
        uris = {resource["uri"] for resource in resources["resources"]}
        assert "test://static-text" in uris and "demo://resource/static/document/architecture.md" in uris
        read = parsed(*await inspector(scratch, direct, "--method", "resources/read", "--uri", "test://static-text"))
        assert read["contents"][0]["text"] == "This is the content of the static text resource."
        templates = parsed(*await inspector(scratch, direct, "--method", "resources/templates/list"))
        assert "test://template/{id}/data" in {t["uriTemplate"] for t in templates["resourceTemplates"]}
    finally:
        stop_engines(home)
