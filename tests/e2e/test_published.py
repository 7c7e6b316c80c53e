"""`mcpmanager serve --stdio --mode direct` in front of real, published MCP servers (npm and PyPI),
driven by the real SDK client in both protocol eras and by the MCP Inspector CLI.

The servers are installed by scripts/install-published-servers.sh into .cache/published/ (once; later
runs only rewrite the config), which also writes the config used here: eight working servers and two
deliberately broken ones (`missing`: command not found, `exits`: prints `fatal: no API key`, exits 3).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.helpers.clients import serve_client, text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.published import (
    BROKEN,
    CALL_TIMEOUT,
    CATALOGUE_TIMEOUT,
    CLASHING,
    ERAS,
    GOOD,
    INSPECTOR,
    VALID_NAME,
    Config,
    cached_tools,
    call,
    catalogue_complete,
    command_line,
    git_repo,
    group_members,
    listed,
    make_config,
    sandbox,
    serve_log,
    state_is,
    status,
    wait_status,
)

# The install may take a minute or more on a cold cache: it runs in the first test's setup, so the
# per-test timeout bounds the test functions only; the install has its own bound (INSTALL_TIMEOUT).
pytestmark = [pytest.mark.published, pytest.mark.timeout(180, func_only=True)]

# 1. The whole published catalogue through the proxy ----------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_published_servers_are_served_as_one_catalogue(
    published: Config, tmp_path: Path, home: Path, era: str
) -> None:
    config = make_config(published, tmp_path / "config")
    files = sandbox(published) / "files"
    async with serve_client(config, home, era) as client:
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        assert modern == (era == "auto"), client.protocol_version  # mcpmanager speaks both eras
        servers = await wait_status(home, catalogue_complete, CATALOGUE_TIMEOUT, "every server settled")

        # The broken ones say why.
        assert servers["missing"]["reason"] == "command not found: mcp-server-that-does-not-exist"
        assert servers["missing"]["tools"] is None
        exits = str(servers["exits"]["reason"])
        assert "exited 3" in exits and "fatal: no API key" in exits, exits
        assert servers["exits"]["tools"] is None

        # Every tool of every good server, exactly once, under a valid, unique name.
        own = await cached_tools(home, GOOD)
        counts = {name: servers[name]["tools"] for name in GOOD}
        assert counts == {name: len(own[name]) for name in GOOD}
        assert all(isinstance(n, int) and n > 0 for n in counts.values()), counts
        names = await listed(client)
        assert len(names) == sum(counts.values()), (counts, names)
        assert len(set(names)) == len(names), [n for n, k in Counter(names).items() if k > 1]
        assert all(VALID_NAME.match(n) for n in names), [n for n in names if not VALID_NAME.match(n)]
        holders = Counter(tool for name in GOOD for tool in set(own[name]))
        assert {tool for tool, k in holders.items() if k > 1} == CLASHING
        pairs = [(server, tool) for server in GOOD for tool in own[server]]
        expected = [f"{server}__{tool}" if holders[tool] > 1 else tool for server, tool in pairs]
        assert sorted(names) == sorted(expected)
        for tool in CLASHING:
            assert tool not in names
            assert f"filesystem__{tool}" in names and f"desktop-commander__{tool}" in names

        # Real calls through the proxy, one per server.
        now = await call(client, "get_current_time", {"timezone": "UTC"})
        assert now.structured_content is not None and now.structured_content["timezone"] == "UTC"
        assert str(now.structured_content["datetime"]).endswith("+00:00")
        assert '"timezone": "UTC"' in text_of(now)

        listing = text_of(await call(client, "filesystem__list_directory", {"path": str(files)}))
        assert "[FILE] hello.txt" in listing, listing

        entity = f"mcpmanager-e2e-{uuid.uuid4().hex[:8]}"
        await call(
            client,
            "create_entities",
            {"entities": [{"name": entity, "entityType": "test", "observations": ["via mcpmanager"]}]},
        )
        graph = text_of(await call(client, "read_graph", {}))
        assert entity in graph and "via mcpmanager" in graph, graph

        git = text_of(await call(client, "git_status", {"repo_path": str(git_repo(published))}))
        assert "notes.txt" in git and "not staged" in git, git

        echo = text_of(await call(client, "echo", {"message": f"hello {era}"}))
        assert echo == f"Echo: hello {era}"

        listing = text_of(await call(client, "desktop-commander__list_directory", {"path": str(files)}))
        assert "hello.txt" in listing, listing

        unknown = await client.call_tool("list_directory", {"path": str(files)})
        assert unknown.is_error and "filesystem__list_directory" in text_of(unknown)

        # Nothing above changed any server's state.
        after = await anyio.to_thread.run_sync(status, home)
        assert catalogue_complete(after), after
        assert all(after[name]["restarts"] == 0 for name in GOOD), after


# 2. The MCP Inspector CLI as the client ------------------------------------------------------------


def inspector_command(home: Path, config: Path, scratch: Path, method: list[str]) -> list[str]:
    scratch.mkdir(exist_ok=True)
    return [
        str(INSPECTOR),
        "--cli",
        "-e",
        f"MCPMANAGER_HOME={home}",
        "--format",
        "json",
        *method,
        # `--` ends the Inspector's options: its own `--config` would otherwise take ours.
        "--",
        sys.executable,
        "-m",
        "mcpmanager",
        "serve",
        "--stdio",
        "--mode",
        "direct",
        "--config",
        str(config),
    ]


async def inspector(home: Path, config: Path, scratch: Path, *method: str) -> dict[str, Any]:
    """Run the Inspector CLI against `mcpmanager serve --stdio`; its JSON output."""
    command = inspector_command(home, config, scratch, list(method))
    # HOME: the Inspector keeps a catalog and client settings under ~/.mcp-inspector.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch)}
    with anyio.fail_after(CALL_TIMEOUT):
        done = await anyio.run_process(command, env=env, check=False)
    out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    assert done.returncode == 0, f"inspector exited {done.returncode}\nstdout: {out}\nstderr: {err}"
    return json.loads(out)  # type: ignore[no-any-return]


async def test_mcp_inspector_cli_lists_and_calls_through_the_proxy(
    published: Config, tmp_path: Path, home: Path
) -> None:
    config = make_config(published, tmp_path / "config", only=["time", "git"])
    # Warm the catalogue cache: a fresh proxy answers tools/list with what it has at that moment.
    async with serve_client(config, home) as client:

        async def both_listed() -> bool:
            return {"get_current_time", "git_status"} <= set(await listed(client))

        await wait_for(both_listed, timeout=CATALOGUE_TIMEOUT)
        warm = await listed(client)
    assert len(warm) == len(set(warm)) and "convert_time" in warm and "git_log" in warm

    scratch = tmp_path / "inspector-home"
    tools = (await inspector(home, config, scratch, "--method", "tools/list"))["result"]["tools"]
    assert sorted(t["name"] for t in tools) == sorted(warm)
    by_name = {t["name"]: t for t in tools}
    assert by_name["get_current_time"]["inputSchema"]["required"] == ["timezone"]

    for era in ERAS:
        calling = ["--method", "tools/call", "--tool-name", "get_current_time", "--tool-arg", "timezone=UTC"]
        result = (await inspector(home, config, scratch, "--protocol-era", era, *calling))["result"]
        assert result.get("isError") is not True, (era, result)
        assert result["structuredContent"]["timezone"] == "UTC", (era, result)
        assert str(result["structuredContent"]["datetime"]).endswith("+00:00"), (era, result)
        assert any('"timezone": "UTC"' in c.get("text", "") for c in result["content"]), (era, result)


# 3. A killed server comes back ---------------------------------------------------------------------


async def test_a_killed_published_server_comes_back(published: Config, tmp_path: Path, home: Path) -> None:
    # A backoff long enough to be seen by polling `status`.
    config = make_config(published, tmp_path / "config", only=["time"], backoffInitial=4, backoffMax=4)
    async with serve_client(config, home) as client:
        ready = await wait_status(home, state_is("time", "ready"), CATALOGUE_TIMEOUT, "time ready")
        await wait_for(lambda: listed(client), timeout=CALL_TIMEOUT)
        await call(client, "get_current_time", {"timezone": "UTC"})
        pid = ready["time"]["pid"]
        assert isinstance(pid, int) and pid_alive(pid)

        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        down = await wait_status(home, state_is("time", "backoff"), 20, "time backing off after SIGKILL")
        assert "killed by SIGKILL" in str(down["time"]["reason"]), down["time"]
        assert down["time"]["retry_in"] == 4
        if time.monotonic() - killed < 3:  # surely still backing off: a call waits for the restart
            with anyio.fail_after(CALL_TIMEOUT):
                waited = await client.call_tool("get_current_time", {"timezone": "UTC"})
            assert not waited.is_error and time.monotonic() - killed >= 4, text_of(waited)
        await wait_for(lambda: not pid_alive(pid), timeout=10)

        up = await wait_status(home, state_is("time", "ready"), 60, "time ready again after the backoff")
        assert up["time"]["restarts"] == 1
        assert up["time"]["pid"] != pid and pid_alive(up["time"]["pid"])
        now = await call(client, "get_current_time", {"timezone": "UTC"})
        assert now.structured_content is not None and now.structured_content["timezone"] == "UTC"


# 4. Stopping leaves nothing behind -----------------------------------------------------------------


async def test_stopping_the_proxy_leaves_no_published_server_process(
    published: Config, tmp_path: Path, home: Path
) -> None:
    config = make_config(published, tmp_path / "config")
    groups: dict[str, set[int]] = {}
    async with serve_client(config, home) as client:
        servers = await wait_status(home, catalogue_complete, CATALOGUE_TIMEOUT, "every server settled")
        await call(client, "echo", {"message": "still here"})
        # A grandchild: desktop-commander runs commands in its own process group.
        started = text_of(await call(client, "start_process", {"command": "sleep 300", "timeout_ms": 500}))
        found = re.search(r"PID (\d+)", started)
        assert found, started
        grandchild = int(found.group(1))
        for name in GOOD:
            pid = servers[name]["pid"]
            assert isinstance(pid, int), servers[name]
            groups[name] = group_members(pid)
            assert pid in groups[name], (name, pid, groups[name])
        assert all(servers[name]["pid"] is None for name in BROKEN)
        assert grandchild in groups["desktop-commander"] and pid_alive(grandchild)
    everyone = set().union(*groups.values())
    assert len(everyone) >= len(GOOD)

    def leftovers() -> set[int]:
        return {pid for pid in everyone if pid_alive(pid)}

    try:
        await wait_for(lambda: not leftovers(), timeout=30)
    except TimeoutError:
        left = leftovers()
        alive = {name: {pid: command_line(pid) for pid in pids & left} for name, pids in groups.items()}
        pytest.fail(f"processes left behind after the proxy stopped: {alive}\n{serve_log(home)}")
