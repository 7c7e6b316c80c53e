"""A real Claude Code (the npm package, installed with the published servers) on what `mcpmanager
install --client claude-code` wrote: `claude mcp list` connects, and `claude -p`, its tool search on,
sends the model mcpmanager's meta-tools and the pinned tool loaded, not behind that search. The model
API is a loopback stand-in that records Claude Code's request and refuses it (there is no network);
a tee of the stdio connection records the tools/list mcpmanager sent Claude Code, with
`_meta["anthropic/alwaysLoad"]` on those tools."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpmanager.core.proxy.meta_tools import NAMES
from tests.helpers.engines import engines, stop_engines, wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.published import PUBLISHED, Config
from tests.helpers.recorded_api import Recorded, recorded_api
from tests.helpers.vaults import current_keyring_env

pytestmark = [pytest.mark.published, pytest.mark.timeout(300, func_only=True)]

ARCH = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
CLAUDE = PUBLISHED / "node_modules" / "@anthropic-ai" / f"claude-code-linux-{ARCH}" / "claude"
TEE = Path(__file__).resolve().parents[1] / "helpers" / "stdio_tee.py"
ALWAYS_LOAD = "anthropic/alwaysLoad"
LOADED = [f"mcp__mcpmanager__{name}" for name in (*NAMES, "echo")]  # as Claude Code names them


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[Path]:
    """mcpmanager's home: one fixture server, its `echo` pinned (always on)."""
    home = tmp_path / "manager"
    write_config(home, {"a": fixture("--name", "a")}, supervisor=FAST, tools={"a:echo": {"alwaysOn": True}})
    try:
        yield home
    finally:
        stop_engines(home)  # the engine `connect` started outlives Claude Code on purpose


def environment(user: Path, manager: Path, **extra: str) -> dict[str, str]:
    quiet = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1"}
    path = os.environ.get("PATH", "/usr/bin:/bin")
    return {"HOME": str(user), "MCPMANAGER_HOME": str(manager), "PATH": path, **quiet, **current_keyring_env(), **extra}


async def run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    with anyio.fail_after(120):
        done = await anyio.run_process(command, env=env, cwd=cwd, check=False)
    return done.returncode, done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


async def ask(user: Path, manager: Path, project: Path, api: Recorded) -> dict[str, Any]:
    """`claude -p` with tool search forced on; the first request it sent the model (refused). Claude
    Code waits for an `alwaysLoad` server at most 5 s before that request, and for others not at all
    (seen here: once in four runs the tools were not there yet on a busy machine), so it is asked to
    wait for every server (MCP_CONNECTION_NONBLOCKING=0): what is tested is which tools it loads."""
    before = len(api.requests)
    fake = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-fake-0000", "ENABLE_TOOL_SEARCH": "true"}
    env = environment(user, manager, CLAUDE_CODE_MAX_RETRIES="0", MCP_CONNECTION_NONBLOCKING="0", **fake)
    status, out = await run([str(CLAUDE), "-p", "say hello"], env, project)
    assert status == 1 and "recorded by a loopback stand-in" in out, out
    asked = [body for path, body in api.requests[before:] if path.startswith("/v1/messages") and body.get("tools")]
    assert asked, api.requests
    return asked[0]


def tools_listed(record: Path) -> list[dict[str, Any]]:
    """The tools of mcpmanager's answers to tools/list, from the tee's record."""
    said = [json.loads(line[2:]) for line in record.read_text().splitlines() if line.startswith("< {")]
    asked = [json.loads(line[2:]) for line in record.read_text().splitlines() if line.startswith("> {")]
    ids = {message.get("id") for message in asked if message.get("method") == "tools/list"}
    return [
        tool for m in said if m.get("id") in ids and "tools" in m.get("result", {}) for tool in m["result"]["tools"]
    ]


async def test_claude_code_connects_and_keeps_mcpmanagers_tools_loaded(
    published: Config, manager: Path, tmp_path: Path
) -> None:
    assert CLAUDE.is_file(), f"{CLAUDE} missing: scripts/install-published-servers.sh installs it"
    user, project = tmp_path / "user", tmp_path / "project"
    (user / ".claude").mkdir(parents=True)
    project.mkdir()

    # 1. install, as a user runs it: discovery mode (the config's default) asks Claude Code to load it all.
    status, out = await run(
        [sys.executable, "-m", "mcpmanager", "install", "--client", "claude-code"], environment(user, manager), project
    )
    assert status == 0, out
    entry = json.loads((user / ".claude.json").read_text())["mcpServers"]["mcpmanager"]
    assert entry["alwaysLoad"] is True and entry["args"][-1] == "connect"

    # 2. Claude Code connects to it (the engine starts behind `connect`).
    status, out = await run([str(CLAUDE), "mcp", "list"], environment(user, manager), project)
    assert status == 0, out
    [line] = [line for line in out.splitlines() if line.startswith("mcpmanager: ")]
    assert line.endswith("✔ Connected"), out
    await wait_for(lambda: [e["servers"]["a"]["state"] for e in engines(manager)] == ["ready"], timeout=60)

    with recorded_api() as api:
        # 3. What Claude Code sends the model: its tool search is on (ToolSearch, MCP tools deferred by
        # default), yet the meta-tools and the pinned tool are loaded, none of them behind the search.
        request = await ask(user, manager, project, api)
        tools = {tool["name"]: tool for tool in request["tools"]}
        assert "ToolSearch" in tools
        for name in LOADED:
            assert name in tools and not tools[name].get("defer_loading"), name
        assert "mcp__mcpmanager__" not in json.dumps(request["messages"])  # not in the list of deferred tools

        # 4. The wire: the same entry with a tee in front of its command.
        record = tmp_path / "wire.txt"
        document = json.loads((user / ".claude.json").read_text())
        teed = document["mcpServers"]["mcpmanager"]
        teed["args"] = [str(TEE), str(record), teed["command"], *teed["args"]]
        teed["command"] = sys.executable
        (user / ".claude.json").write_text(json.dumps(document, indent=2))
        again = await ask(user, manager, project, api)

        # 5. The tools' `_meta` alone keeps them loaded (an entry without `alwaysLoad`: one added by
        # `claude mcp add`, or direct mode's pinned tools).
        del teed["alwaysLoad"]
        (user / ".claude.json").write_text(json.dumps(document, indent=2))
        alone = await ask(user, manager, project, api)
    for sent in (again, alone):
        tools = {tool["name"]: tool for tool in sent["tools"]}
        assert [name for name in LOADED if name in tools and not tools[name].get("defer_loading")] == LOADED
        assert "ToolSearch" in tools and "mcp__mcpmanager__" not in json.dumps(sent["messages"])
    listed = {tool["name"]: tool for tool in tools_listed(record)}
    assert list(listed) == [*NAMES, "echo"], record.read_text()
    for name, tool in listed.items():
        assert tool["_meta"][ALWAYS_LOAD] is True, name
