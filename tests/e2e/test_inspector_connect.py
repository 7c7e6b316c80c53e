"""The MCP Inspector CLI (published on npm) reaches the user's engine the two ways clients do: by
launching `mcpmanager connect`, and directly over HTTP with the bearer token; without the token it
is turned away."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.engines import engines, wait_for
from tests.helpers.published import INSPECTOR, Config

pytestmark = [pytest.mark.published, pytest.mark.timeout(180, func_only=True)]


async def inspector(scratch: Path, target: list[str], *options: str) -> tuple[int, str]:
    """Run the Inspector CLI; (exit status, stdout). Its HOME is scratch: it keeps a catalog there."""
    scratch.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch)}
    with anyio.fail_after(90):
        done = await anyio.run_process([str(INSPECTOR), "--cli", *target, *options], env=env, check=False)
    return done.returncode, done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


def result(out: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(out)
    return document


async def test_the_inspector_reaches_the_engine_through_connect_and_over_http(
    published: Config, user: Path, tmp_path: Path
) -> None:
    scratch = tmp_path / "inspector"
    connect = [sys.executable, "-m", "mcpmanager", "connect", "--mode", "direct"]
    # The Inspector hands its child only the variables it is given: what a client does.
    env = ["-e", f"MCPMANAGER_HOME={user}", "-e", f"PATH={os.environ.get('PATH', '')}"]

    # 1. Through `connect`, with no engine running: one is started, lists the servers' tools as they
    # come up (the Inspector checks a tool is listed before it calls it), and the call reaches one.
    async def listed_through_connect() -> bool:
        status, out = await inspector(scratch, connect, *env, "--method", "tools/list")
        assert status == 0, out
        return {"a__echo", "b__echo"} <= {tool["name"] for tool in result(out)["tools"]}

    await wait_for(listed_through_connect, timeout=60, interval=0.5)
    [engine] = engines(user)
    assert engine["front_end"] == "background"
    status, out = await inspector(
        scratch, connect, *env, "--method", "tools/call", "--tool-name", "b__echo", "--tool-arg", "text=via-connect"
    )
    assert status == 0, out
    assert result(out)["content"] == [{"type": "text", "text": "via-connect"}]
    assert [info["pid"] for info in engines(user)] == [engine["pid"]]  # the same engine, reached again

    # 2. Directly over HTTP with the token, each mode at its own path.
    token = Path(engine["token_file"]).read_text(encoding="ascii").strip()
    bearer = ["--transport", "http", "--header", f"Authorization: Bearer {token}"]
    direct = str(engine["urls"]["direct"])
    status, out = await inspector(
        scratch, [direct], *bearer, "--method", "tools/call", "--tool-name", "a__add", "--tool-arg", "a=2", "b=3"
    )
    assert status == 0, out
    assert result(out)["content"] == [{"type": "text", "text": "5"}]
    status, out = await inspector(scratch, [str(engine["urls"]["discovery"])], *bearer, "--method", "tools/list")
    assert status == 0, out
    assert [tool["name"] for tool in result(out)["tools"]] == [
        "discover_tools",
        "search_tools_regex",
        "get_tool_schema",
        "call_tool",
    ]

    # 3. Without the token, or with a wrong one: turned away (401), nothing listed.
    for header in ([], ["--header", "Authorization: Bearer not-the-token"]):
        status, out = await inspector(scratch, [direct], "--transport", "http", *header, "--method", "tools/list")
        assert status != 0, out
        assert "auth_required" in out and '"tools"' not in out, out
