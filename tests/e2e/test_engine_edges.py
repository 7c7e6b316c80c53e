"""The engine in-process in front of real subprocess servers that misbehave: floods, stdout noise,
pagination, crash loops, grandchildren, disabled servers, many slow starters at once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.clients import text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FAST, fixture

BUILTINS = {"echo", "add", "fail", "slow", "sleep", "whoami", "stderr"}


@asynccontextmanager
async def running(
    home: Path, servers: dict[str, Any], mode: Mode = "direct", **supervisor: Any
) -> AsyncIterator[Engine]:
    """An engine in `mode` over `servers`, started, and stopped on the way out."""
    document = {"mcpServers": servers, "supervisor": {**FAST, **supervisor}}
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(parse_config(json.dumps(document), "test"), paths, mode)
    await engine.start()
    try:
        yield engine
    finally:
        await engine.stop()


def state_of(engine: Engine, name: str) -> State:
    return engine.downstreams[name].status.state


async def call(downstream: Downstream, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await downstream.call_tool(tool, arguments)
    assert isinstance(result, types.CallToolResult)
    return result


async def test_a_flooding_server_serves_and_its_log_stays_bounded(home: Path) -> None:
    cap, ring = 200_000, 500
    async with running(home, {"flood": fixture("--flood", "100000")}, logMaxBytes=cap, ringLines=ring) as engine:
        d = engine.downstreams["flood"]
        await wait_for(lambda: state_of(engine, "flood") is State.READY, timeout=30)
        result = await call(d, "echo", {"text": "through the flood"})
        assert not result.is_error and text_of(result) == "through the flood"
        # Every line arrives (none lost, none merged), while memory and disk stay capped.
        await wait_for(lambda: d.log.total_lines >= 100_000, timeout=30)
        assert any(line.text == "flood line 99999" for line in d.log.lines)
        assert len(d.log.lines) <= ring
        result = await call(d, "add", {"a": 2, "b": 3})
        assert text_of(result) == "5"
        assert d.log.path is not None
        log, rotated = d.log.path, d.log.path.with_name(d.log.path.name + ".1")
        # Right after a rotation the live file is absent until the next line arrives.
        live = log.stat().st_size if log.exists() else 0
        assert live <= cap
        assert rotated.exists()
        assert {p.name for p in log.parent.iterdir()} <= {"flood.log", "flood.log.1"}
        # The raw flood is ~1.8 MB (~3.7 MB with timestamps); what is kept is a fraction of that.
        # The rotated file may pass the cap by the one batch that triggered rotation (< 150 kB here).
        assert live + rotated.stat().st_size < 3 * cap
        assert state_of(engine, "flood") is State.READY


async def test_non_protocol_stdout_is_kept_as_noise_and_the_session_survives(home: Path) -> None:
    async with running(home, {"noisy": fixture("--garbage-stdout")}) as engine:
        d = engine.downstreams["noisy"]
        await wait_for(lambda: state_of(engine, "noisy") is State.READY, timeout=30)
        assert text_of(await call(d, "echo", {"text": "still fine"})) == "still fine"
        expected = ["[stdout, not MCP] starting up...", '[stdout, not MCP] {"log": "not jsonrpc"}']
        ring = [line.text for line in d.log.lines]
        assert [line for line in ring if line.startswith("[stdout")] == expected
        assert d.process is not None and d.process.stdout_noise == 2
        assert d.log.path is not None
        on_disk = d.log.path.read_text(encoding="utf-8")
        assert all(line in on_disk for line in expected)
        assert {t.name for t in engine.catalogue.tools()} == BUILTINS


async def test_every_page_of_a_paginated_tool_list_reaches_the_catalogue(tmp_path: Path, home: Path) -> None:
    extra = [
        {"name": f"extra_{i}", "description": f"extra tool {i}", "inputSchema": {"type": "object"}} for i in range(7)
    ]
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(extra), encoding="utf-8")
    servers = {"paged": fixture("--pages", "2", "--tools-file", str(tools_file))}
    async with running(home, servers) as engine:
        await wait_for(lambda: state_of(engine, "paged") is State.READY, timeout=30)
        names = [t.name for t in engine.catalogue.tools()]
        assert sorted(names) == sorted(BUILTINS | {f"extra_{i}" for i in range(7)})  # 14 tools on 7 pages
        d = engine.downstreams["paged"]
        assert text_of(await call(d, "extra_6", {"k": 1})) == '{"k": 1}'


async def test_a_server_that_exits_at_start_ends_in_a_crash_loop(home: Path) -> None:
    servers = {"dies": fixture("--exit-at-start", "3"), "ok": fixture()}
    async with running(home, servers, backoffInitial=0.05, crashLimit=3) as engine:
        await wait_for(lambda: state_of(engine, "dies") is State.FAILED, timeout=30)
        status = engine.downstreams["dies"].status
        assert status.reason.startswith("crash loop: 3 crashes in 30 s; last: ")
        assert "exited 3" in status.reason and "fatal: cannot start" in status.reason
        assert status.restarts == 2 and status.retry_in is None
        await wait_for(lambda: state_of(engine, "ok") is State.READY, timeout=30)
        # Failed stays failed: no further attempt is scheduled.
        assert engine.downstreams["dies"].process is None
        assert state_of(engine, "dies") is State.FAILED


async def test_a_server_that_crashes_on_every_call_ends_in_a_crash_loop(home: Path) -> None:
    async with running(home, {"crashy": fixture("--crash-after", "1")}, backoffInitial=0.05) as engine:
        d = engine.downstreams["crashy"]
        for _ in range(10):  # crashLimit is 3: the loop ends well before this bound
            await wait_for(lambda: d.status.state in (State.READY, State.FAILED), timeout=30)
            if d.status.state is State.FAILED:
                break
            result = await call(d, "echo", {"text": "boom"})
            assert result.is_error and "crashy" in text_of(result)
        assert d.status.state is State.FAILED
        assert d.status.reason.startswith("crash loop: 3 crashes in 30 s; last: exited 3")
        assert "fatal: crashing after 1 calls" in d.status.reason
        # A call to a failed server is an error naming it, its state and its last stderr.
        result = await call(d, "echo", {"text": "again"})
        assert result.is_error
        assert "Server 'crashy' is unavailable (failed: crash loop" in text_of(result)
        assert "fatal: crashing after 1 calls" in text_of(result)


async def test_stop_kills_the_whole_process_group(tmp_path: Path, home: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    async with running(home, {"family": fixture("--grandchild", str(pidfile))}) as engine:
        d = engine.downstreams["family"]
        await wait_for(lambda: state_of(engine, "family") is State.READY, timeout=30)
        await wait_for(pidfile.exists, timeout=10)
        assert d.process is not None and d.process.pid is not None
        child, grandchild = d.process.pid, int(pidfile.read_text(encoding="utf-8"))
        assert pid_alive(child) and pid_alive(grandchild)
        await engine.stop()
        assert not pid_alive(child)
        await wait_for(lambda: not pid_alive(grandchild), timeout=10)
        assert state_of(engine, "family") is State.STOPPED


async def test_a_disabled_server_is_never_started(tmp_path: Path, home: Path) -> None:
    pidfile = tmp_path / "off.pid"
    servers = {"off": fixture("--grandchild", str(pidfile), disabled=True), "on": fixture()}
    async with running(home, servers) as engine:
        await wait_for(lambda: state_of(engine, "on") is State.READY, timeout=30)
        off = engine.downstreams["off"]
        assert off.status.state is State.DISABLED
        assert off.process is None and off.tools is None
        assert not pidfile.exists()  # it would have been written by a started process
        assert off.log.path is not None and not off.log.path.exists()  # not even a spawn note
        assert engine.describe()["servers"]["off"]["state"] == "disabled"
        assert {t.server for t in engine.catalogue.tools()} == {"on"}
        assert state_of(engine, "off") is State.DISABLED


async def test_slow_servers_start_concurrently(home: Path) -> None:
    names = [f"s{i}" for i in range(10)]
    servers = {name: fixture("--name", name, "--start-delay", "1.5") for name in names}
    async with running(home, servers, startTimeout=60) as engine:
        downstreams = [engine.downstreams[name] for name in names]

        def all_starting_at_once() -> bool:
            # Each process sleeps 1.5 s before it can answer: if starts were serialised behind one
            # another's readiness, there would never be a moment with all ten spawned and starting.
            return all(
                d.status.state is State.STARTING
                and d.process is not None
                and d.process.pid is not None
                and pid_alive(d.process.pid)
                for d in downstreams
            )

        await wait_for(all_starting_at_once, timeout=20, interval=0.01)
        await wait_for(lambda: all(d.status.state is State.READY for d in downstreams), timeout=60)
        tools = engine.catalogue.tools()
        assert len(tools) == 10 * len(BUILTINS)
        assert {(t.server, t.name) for t in tools} == {(s, n) for s in names for n in BUILTINS}
        assert "s7__whoami" in {t.exposed for t in tools}
        assert text_of(await call(engine.downstreams["s7"], "whoami", {})).startswith("s7 ")


async def test_only_a_name_nothing_answers_waits_for_a_starting_server(tmp_path: Path, home: Path) -> None:
    """A server still starting (nothing cached) may list the called name: a plain miss waits for it.
    An ambiguous name or a withheld guess is answered at once: a late server can only add candidates."""
    extra = tmp_path / "late.json"
    extra.write_text(json.dumps([{"name": "late_only", "description": "x", "inputSchema": {"type": "object"}}]))
    destructive = tmp_path / "ready.json"
    spec = {"name": "delete_record", "description": "x", "inputSchema": {"type": "object"}}
    destructive.write_text(json.dumps([spec]))
    servers = {
        "a": fixture("--name", "a", "--tools-file", str(destructive)),
        "b": fixture("--name", "b"),
        "late": fixture("--name", "late", "--start-delay", "6", "--tools-file", str(extra)),
    }
    async with running(home, servers, startTimeout=60, startingWait=60) as engine:
        await wait_for(lambda: state_of(engine, "a") is State.READY and state_of(engine, "b") is State.READY, 30)
        assert state_of(engine, "late") is State.STARTING
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            ambiguous = await client.call_tool("whoami", {})  # on a and b: answered by what is up
            assert ambiguous.is_error and text_of(ambiguous).startswith("Ambiguous tool name 'whoami'")
            withheld = await client.call_tool("remove_record", {})
            assert withheld.is_error and "The closest is delete_record, but it can destroy data" in text_of(withheld)
            assert state_of(engine, "late") is State.STARTING  # neither waited for it
            waited = await client.call_tool("late_only", {})  # only the late server has it
            assert not waited.is_error, text_of(waited)
            assert state_of(engine, "late") is State.READY


async def test_a_search_that_finds_nothing_waits_for_a_starting_server(tmp_path: Path, home: Path) -> None:
    """On a first run nothing is cached: discover_tools right after the start must not answer "no
    tool" for a tool a server still starting is about to list. A search that finds something in
    what is up is answered at once."""
    garden = tmp_path / "garden.json"
    spec = {"name": "water_garden", "description": "Turn on the garden irrigation.", "inputSchema": {"type": "object"}}
    garden.write_text(json.dumps([spec]))
    servers = {
        "a": fixture("--name", "a"),
        "late": fixture("--name", "late", "--start-delay", "6", "--tools-file", str(garden)),
    }
    async with running(home, servers, "discovery", startTimeout=60, startingWait=60) as engine:
        await wait_for(lambda: state_of(engine, "a") is State.READY, 30)
        assert state_of(engine, "late") is State.STARTING
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            found = await client.call_tool("discover_tools", {"query": "whoami"})  # a's: no wait
            assert "whoami" in text_of(found) and state_of(engine, "late") is State.STARTING
            waited = await client.call_tool("discover_tools", {"query": "irrigation for the garden"})
            assert "water_garden" in text_of(waited), text_of(waited)
            assert state_of(engine, "late") is State.READY
