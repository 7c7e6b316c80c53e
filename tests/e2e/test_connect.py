"""`mcpmanager connect`, the stdio bridge clients launch, as a real subprocess driven by the SDK's
`Client`: it starts the headless engine when none runs (no display here), reaches a running one,
forwards progress, cancellation and list_changed, and survives the engine going away — over the
engine's local socket (what it takes where the engine offers one) and over its HTTP endpoint
(`--http`; what it takes where there is no socket)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers.clients import Notes, bridge_env, connected, text_of
from tests.helpers.engines import engine_pid, engines, pid_alive, socket_sessions, wait_for

ERAS = ["legacy", "auto"]
LINKS = ["socket", "http"]
META = {"discover_tools", "search_tools_regex", "get_tool_schema", "call_tool"}


async def names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def has(client: Client, wanted: set[str]) -> bool:
    return wanted <= await names(client)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("era", ERAS)
async def test_connect_starts_an_engine_then_reaches_it_in_each_mode(user: Path, era: str, link: str) -> None:
    assert engines(user) == []
    started = time.monotonic()
    async with connected(user, era, mode="direct", link=link) as direct:
        cold = time.monotonic() - started
        expected = "2025-11-25" if era == "legacy" else "2026-07-28"
        assert direct.protocol_version == expected  # the client's own era, negotiated end to end
        [engine] = engines(user)
        assert engine["front_end"] == "background"  # no display: the headless engine, detached
        assert socket_sessions(engine["socket"]) == (1 if link == "socket" else 0)
        status = await anyio.run_process([sys.executable, "-m", "mcpmanager", "status"], env=bridge_env(user))
        where = f"at {engine['endpoint']}, for connect at {engine['socket']}"  # the socket either way
        assert status.stdout.decode().splitlines()[0] == f"engine pid {engine['pid']} ({engine['mode']} mode) {where}"
        await wait_for(lambda: has(direct, {"a__echo", "b__echo"}), timeout=30)
        assert text_of(await direct.call_tool("b__echo", {"text": "through the bridge"})) == "through the bridge"

        # A second client while the engine runs: reached at once, in its own mode, same engine.
        started = time.monotonic()
        async with connected(user, era, mode="discovery", link=link) as discovery:
            warm = time.monotonic() - started
            assert engine_pid(user) == engine["pid"]
            assert socket_sessions(engine["socket"]) == (2 if link == "socket" else 0)
            assert await names(discovery) == META
            found = await discovery.call_tool("discover_tools", {"query": "add two numbers"})
            assert "a__add" in text_of(found) or "b__add" in text_of(found)
            answer = await discovery.call_tool("call_tool", {"tool_name": "a__add", "arguments": {"a": 2, "b": 3}})
            assert text_of(answer) == "5"
    print(f"\n[{era}, {link}] connect initialize: cold {cold:.2f} s (engine started), warm {warm:.2f} s")
    # The engine outlives its clients: the next one starts at once.
    assert pid_alive(int(engine["pid"]))


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("era", ERAS)
async def test_progress_cancellation_and_list_changed_cross_the_bridge(user: Path, era: str, link: str) -> None:
    notes = Notes()
    async with connected(user, era, mode="direct", notes=notes, link=link) as client:
        await wait_for(lambda: has(client, {"a__slow", "a__sleep"}), timeout=30)

        seen: list[float] = []

        # The parameter names are those of the SDK's ProgressFnT protocol, which may pass them by keyword.
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        result = await client.call_tool("a__slow", {"seconds": 0.3, "steps": 3}, progress_callback=on_progress)
        assert text_of(result) == "done"
        assert seen == [1, 2, 3]

        log = user / "logs" / "a.log"
        with anyio.move_on_after(1.5):
            await client.call_tool("a__sleep", {"seconds": 30})
        await wait_for(lambda: "cancelled sleep" in log.read_text(), timeout=10)

        if era == "legacy":
            before = notes.count
            await client.call_tool("add_tool", {"name": "brand_new"})
            await wait_for(lambda: notes.count > before, timeout=10)
        else:
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("add_tool", {"name": "brand_new"})
                with anyio.fail_after(10):
                    async for _ in subscription:
                        break
        assert "brand_new" in await names(client)  # unique across servers: listed bare


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("era", ERAS)
async def test_the_bridge_survives_the_engine_going_away(user: Path, era: str, link: str) -> None:
    notes = Notes()
    async with connected(user, era, mode="direct", notes=notes, link=link) as client:
        await wait_for(lambda: has(client, {"a__sleep"}), timeout=30)
        first = engine_pid(user)
        log = user / "logs" / "a.log"
        outcome: list[types.CallToolResult] = []

        async def in_flight() -> None:
            outcome.append(await client.call_tool("a__sleep", {"seconds": 60}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(in_flight)
            await wait_for(lambda: "sleeping 60s" in log.read_text(), timeout=10)
            os.kill(first, signal.SIGTERM)  # the user quits it; the next call brings up another
        [result] = outcome
        assert result.is_error, result
        assert "may or may not have run" in text_of(result), text_of(result)
        await wait_for(lambda: not pid_alive(first), timeout=30)

        # The same client session goes on, through a new engine.
        await wait_for(lambda: has(client, {"b__echo"}), timeout=30)
        assert text_of(await client.call_tool("b__echo", {"text": "after"})) == "after"
        assert engine_pid(user) != first
        [engine] = engines(user)
        assert socket_sessions(engine["socket"]) == (1 if link == "socket" else 0)  # by the same link again
        if era == "legacy":
            assert notes.count >= 1  # told to list again: the new engine's catalogue may differ


def test_connect_without_an_engine_and_told_not_to_start_one_says_so(user: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "connect", "--no-start"],
        env=bridge_env(user),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""  # nothing a client would read as a protocol message
    assert result.stderr == "mcpmanager connect: no mcpmanager engine is running\n"
    assert engines(user) == []


async def test_the_entry_install_writes_launches_the_bridge(user: Path, tmp_path: Path) -> None:
    """What `mcpmanager install` puts into a client's config is a command that works as launched."""
    desktop = tmp_path / "desktop-user"
    (desktop / ".config" / "Claude").mkdir(parents=True)
    install = [sys.executable, "-m", "mcpmanager", "install", "--client", "claude-desktop", "--mode", "direct"]
    done = await anyio.run_process(install, env={**bridge_env(user), "HOME": str(desktop)}, check=False)
    assert done.returncode == 0, done.stderr.decode()
    written = json.loads((desktop / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    entry = written["mcpServers"]["mcpmanager"]
    assert entry["args"][-3:] == ["connect", "--mode", "direct"]
    assert Path(entry["command"]).is_absolute()  # clients start it without the shell's PATH

    # Launched as Claude Desktop launches it: the command, its args, and an environment of its own.
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=bridge_env(user))
    with (user / "installed-entry.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
            await wait_for(lambda: has(client, {"b__echo"}), timeout=30)
            assert text_of(await client.call_tool("b__echo", {"text": "installed"})) == "installed"
