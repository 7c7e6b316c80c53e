"""The fixture server and the demo servers, as real subprocesses driven by the SDK client in both
protocol eras: "legacy" (initialize handshake) and "auto" (server/discover, 2026-07-28)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import zipfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

from mcpmanager.core.system.paths import Paths
from mcpmanager.demo import demo_config, demo_scripts, on_disk
from tests.helpers.clients import text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FIXTURE_SERVER

DEMO = Path(__file__).resolve().parent.parent.parent / "mcpmanager" / "demo"
ERAS = ["legacy", "auto"]
MODERN = "2026-07-28"
BOUND = 30  # seconds: an upper bound for any one test's I/O, never a wait


@asynccontextmanager
async def connect(
    errlog: Path,
    *args: str,
    era: str = "legacy",
    script: Path = FIXTURE_SERVER,
    env: dict[str, str] | None = None,
    message_handler: Any = None,
) -> AsyncIterator[Client]:
    """A real subprocess server (stderr to `errlog`) behind the SDK client."""
    params = StdioServerParameters(command=sys.executable, args=[str(script), *args], env=env)
    with errlog.open("a") as log:
        transport = stdio_client(params, errlog=log)
        async with Client(transport, mode=era, message_handler=message_handler) as client:
            expected = "2025-11-25" if era == "legacy" else MODERN
            assert client.protocol_version == expected
            yield client


async def all_tools(client: Client) -> list[types.Tool]:
    """Walk every tools/list page."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        tools.extend(page.tools)
        if page.next_cursor is None:
            return tools
        cursor = page.next_cursor


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


# -- fixture server -------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_tools_and_results(tmp_path: Path, era: str) -> None:
    log = tmp_path / "stderr.log"
    with anyio.fail_after(BOUND):
        async with connect(log, "--name", "alpha", era=era) as client:
            assert client.server_info is not None and client.server_info.name == "alpha"
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed
            tools = {t.name: t for t in await all_tools(client)}
            assert set(tools) == {"echo", "add", "fail", "slow", "sleep", "whoami", "stderr"}
            assert tools["echo"].input_schema["required"] == ["text"]

            echo = await client.call_tool("echo", {"text": "héllo  there"})
            assert not echo.is_error
            assert text_of(echo) == "héllo  there"
            assert echo.structured_content == {"text": "héllo  there"}
            assert text_of(await client.call_tool("add", {"a": 2, "b": 0.5})) == "2.5"
            assert (await client.call_tool("add", {"a": "x", "b": 1})).is_error

            failing = await client.call_tool("fail", {"message": "nope"})
            assert failing.is_error and text_of(failing) == "nope"

            whoami = await client.call_tool("whoami", {})
            name, pid = text_of(whoami).split()
            assert name == "alpha" and int(pid) != os.getpid() and pid_alive(int(pid))
            assert whoami.structured_content == {"name": "alpha", "pid": int(pid)}

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
            assert unknown.value.error.code == types.INVALID_PARAMS

            await client.call_tool("stderr", {"lines": 3, "text": "to the log"})
            await wait_for(lambda: "to the log 3" in read(log))
        assert "ready" in read(log).splitlines()


@pytest.mark.parametrize("era", ERAS)
async def test_pagination_and_tools_file(tmp_path: Path, era: str) -> None:
    extra = [
        {
            "name": f"extra_{i:02d}",
            "description": f"Extra tool number {i}",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
        for i in range(20)
    ]
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(extra), encoding="utf-8")
    with anyio.fail_after(BOUND):
        flags = ["--tools-file", str(tools_file), "--pages", "4"]
        async with connect(tmp_path / "stderr.log", *flags, era=era) as c:
            first = await c.list_tools(cache_mode="refresh")
            assert len(first.tools) == 4 and first.next_cursor is not None
            names = [t.name for t in await all_tools(c)]
            assert len(names) == 27 == len(set(names))
            assert {f"extra_{i:02d}" for i in range(20)} <= set(names)
            assert json.loads(text_of(await c.call_tool("extra_07", {"q": "find", "n": 1}))) == {
                "n": 1,
                "q": "find",
            }
            with pytest.raises(MCPError) as bad:
                await c.list_tools(cursor="not-a-cursor")
            assert bad.value.error.code == types.INVALID_PARAMS


@pytest.mark.parametrize("era", ERAS)
async def test_progress_is_reported_for_slow(tmp_path: Path, era: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    # The parameter names are those of the SDK's ProgressFnT protocol, which may pass them by keyword.
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(BOUND):
        async with connect(tmp_path / "stderr.log", era=era) as client:
            result = await client.call_tool("slow", {"seconds": 0.2, "steps": 4}, progress_callback=on_progress)
            # The SDK runs progress callbacks as tasks, so the last may land just after the result.
            await wait_for(lambda: len(seen) == 4)
    assert text_of(result) == "done"
    assert seen == [(float(i), 4.0, f"step {i} of 4") for i in range(1, 5)]


@pytest.mark.parametrize("era", ERAS)
async def test_cancelled_sleep_is_logged_and_the_connection_survives(tmp_path: Path, era: str) -> None:
    log = tmp_path / "stderr.log"
    with anyio.fail_after(BOUND):
        async with connect(log, era=era) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "sleep", {"seconds": 600})
                await wait_for(lambda: "sleeping 600s" in read(log))
                tg.cancel_scope.cancel()
            # The client sends notifications/cancelled; the server interrupts the handler.
            await wait_for(lambda: "cancelled sleep" in read(log))
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"


@pytest.mark.parametrize("era", ERAS)
async def test_tool_list_changes_are_announced(tmp_path: Path, era: str) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(BOUND):
        log = tmp_path / "stderr.log"
        async with connect(log, "--changing-tools", era=era, message_handler=on_message) as c:
            names = {t.name for t in await all_tools(c)}
            assert {"add_tool", "remove_tool"} <= names and "brand_new" not in names
            if era == "legacy":
                # Handshake era: a plain notifications/tools/list_changed on the connection.
                assert text_of(await c.call_tool("add_tool", {"name": "brand_new"})) == "added brand_new"
                await changed.wait()
            else:
                # Modern era: only on a subscriptions/listen stream.
                async with c.listen(tools_list_changed=True) as subscription:
                    await c.call_tool("add_tool", {"name": "brand_new"})
                    async for event in subscription:
                        assert event == ToolsListChanged()
                        break
            assert "brand_new" in {t.name for t in await all_tools(c)}
            assert json.loads(text_of(await c.call_tool("brand_new", {"x": 1}))) == {"x": 1}

            if era == "legacy":
                changed = anyio.Event()
                await c.call_tool("remove_tool", {"name": "brand_new"})
                await changed.wait()
            else:
                async with c.listen(tools_list_changed=True) as subscription:
                    await c.call_tool("remove_tool", {"name": "brand_new"})
                    async for _ in subscription:
                        break
            assert "brand_new" not in {t.name for t in await all_tools(c)}
            assert (await c.call_tool("remove_tool", {"name": "brand_new"})).is_error


@pytest.mark.parametrize("era", ERAS)
async def test_crash_after_kills_the_server_on_the_nth_call(tmp_path: Path, era: str) -> None:
    log = tmp_path / "stderr.log"
    with anyio.fail_after(BOUND):
        async with connect(log, "--crash-after", "2", era=era) as client:
            pid = int(text_of(await client.call_tool("whoami", {})).split()[-1])
            with pytest.raises(MCPError) as crashed:
                await client.call_tool("echo", {"text": "2"})
            assert crashed.value.error.code == types.CONNECTION_CLOSED
            await wait_for(lambda: not pid_alive(pid))
    assert "fatal: crashing after 2 calls" in read(log)


async def test_exit_at_start_exits_with_the_code(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        command = [sys.executable, str(FIXTURE_SERVER), "--exit-at-start", "5"]
        done = await anyio.run_process(command, check=False)
    assert done.returncode == 5
    assert done.stderr.decode().strip() == "fatal: cannot start (config missing)"
    assert done.stdout == b""


@pytest.mark.parametrize("era", ERAS)
async def test_exit_at_start_fails_the_connect(tmp_path: Path, era: str) -> None:
    log = tmp_path / "stderr.log"
    with anyio.fail_after(BOUND):
        # The SDK surfaces this as MCPError(CONNECTION_CLOSED) wrapped in (nested) ExceptionGroups.
        with pytest.raises(ExceptionGroup) as failed:
            async with connect(log, "--exit-at-start", "4", era=era):
                pass
    assert failed.group_contains(MCPError, match="Connection closed", depth=None)
    assert "fatal: cannot start (config missing)" in read(log)


async def test_hang_at_init_never_answers(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    started = time.monotonic()
    with pytest.raises(TimeoutError), anyio.fail_after(1):
        async with connect(log, "--hang-at-init"):
            pass
    # Teardown (stdin closed, then the SDK's SIGTERM to the group) is bounded too.
    assert time.monotonic() - started < BOUND
    assert "hanging: will never answer" in read(log)
    assert "ready" not in read(log)


@pytest.mark.parametrize("era", ERAS)
async def test_garbage_on_stdout_is_tolerated(tmp_path: Path, era: str) -> None:
    with anyio.fail_after(BOUND):
        async with connect(tmp_path / "stderr.log", "--garbage-stdout", era=era) as client:
            assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"


async def test_start_delay_and_flood(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    started = time.monotonic()
    with anyio.fail_after(BOUND):
        async with connect(log, "--start-delay", "0.5", "--flood", "20000") as client:
            assert time.monotonic() - started >= 0.5
            assert text_of(await client.call_tool("echo", {"text": "served"})) == "served"
            await wait_for(lambda: "flood line 19999" in read(log))
    lines = read(log).splitlines()
    assert sum(line.startswith("flood line ") for line in lines) == 20000
    assert "ready" in lines


async def test_grandchild_shares_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    with anyio.fail_after(BOUND):
        async with connect(tmp_path / "stderr.log", "--grandchild", str(pidfile)) as client:
            server = int(text_of(await client.call_tool("whoami", {})).split()[-1])
            grandchild = int(pidfile.read_text())
            assert pid_alive(grandchild)
            # The SDK starts the server in a new session, so its pid is the group id.
            assert os.getpgid(grandchild) == os.getpgid(server) == server
        try:
            # Stopping the group, not just the server, is what ends the grandchild. (The SDK client
            # only signals the group when the server outlives its stdin closing.)
            with suppress(ProcessLookupError):
                os.killpg(server, signal.SIGTERM)
            await wait_for(lambda: not pid_alive(grandchild) and not pid_alive(server))
        finally:
            with suppress(ProcessLookupError):
                os.kill(grandchild, signal.SIGKILL)


# -- demo servers ---------------------------------------------------------------------------------


def structured(result: types.CallToolResult) -> Any:
    assert not result.is_error, text_of(result)
    return result.structured_content


@pytest.mark.parametrize("era", ERAS)
async def test_notes_demo(tmp_path: Path, era: str) -> None:
    env = {"MCPMANAGER_DEMO_DIR": str(tmp_path / "data")}
    with anyio.fail_after(BOUND):
        async with connect(tmp_path / "stderr.log", script=DEMO / "notes_server.py", env=env, era=era) as c:
            tools = {t.name: t for t in await all_tools(c)}
            assert set(tools) == {"add_note", "list_notes", "search_notes", "delete_note"}
            assert all(t.description and t.annotations for t in tools.values())
            assert tools["list_notes"].annotations.read_only_hint  # type: ignore[union-attr]
            assert tools["search_notes"].annotations.read_only_hint  # type: ignore[union-attr]
            assert tools["delete_note"].annotations.destructive_hint  # type: ignore[union-attr]
            assert tools["add_note"].annotations.destructive_hint is False  # type: ignore[union-attr]

            first = structured(await c.call_tool("add_note", {"title": "Groceries", "body": "milk, eggs"}))
            second = structured(
                await c.call_tool("add_note", {"title": "Idea", "body": "A proxy", "tags": ["Work", " "]})
            )
            assert (first["id"], second["id"]) == (1, 2)
            assert second["tags"] == ["work"]
            listed = structured(await c.call_tool("list_notes", {}))["result"]
            assert [n["title"] for n in listed] == ["Groceries", "Idea"]
            tagged = structured(await c.call_tool("list_notes", {"tag": "WORK"}))["result"]
            assert [n["id"] for n in tagged] == [2]
            found = structured(await c.call_tool("search_notes", {"query": "EGGS milk"}))["result"]
            assert [n["id"] for n in found] == [1]

            assert structured(await c.call_tool("delete_note", {"note_id": 1}))["title"] == "Groceries"
            missing = await c.call_tool("delete_note", {"note_id": 1})
            assert missing.is_error and "no note with id 1" in text_of(missing)
    saved = json.loads((tmp_path / "data" / "notes.json").read_text(encoding="utf-8"))
    assert [n["title"] for n in saved] == ["Idea"]


@pytest.mark.parametrize("era", ERAS)
async def test_clock_demo(tmp_path: Path, era: str) -> None:
    with anyio.fail_after(BOUND):
        async with connect(tmp_path / "stderr.log", script=DEMO / "clock_server.py", era=era) as c:
            tools = {t.name: t for t in await all_tools(c)}
            assert set(tools) == {"current_time", "convert_time", "days_between"}
            assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())
            dates = tools["days_between"].input_schema["properties"]
            assert dates["start_date"]["format"] == dates["end_date"]["format"] == "date"

            now = structured(await c.call_tool("current_time", {"timezone": "Asia/Tokyo"}))
            assert now["timezone"] == "Asia/Tokyo" and now["utc_offset"] == "+09:00"
            converted = structured(
                await c.call_tool(
                    "convert_time",
                    {"time": "2025-07-01T09:30", "from_tz": "Europe/Paris", "to_tz": "America/New_York"},
                )
            )
            assert converted["target"]["datetime"] == "2025-07-01T03:30:00-04:00"
            assert converted["time_difference"] == "-6h" and converted["source"]["is_dst"]
            days = structured(await c.call_tool("days_between", {"start_date": "2025-01-01", "end_date": "2025-03-01"}))
            assert days == {"days": 59, "weeks": 8, "weekdays": 43}
            backwards = structured(
                await c.call_tool("days_between", {"start_date": "2025-01-08", "end_date": "2025-01-01"})
            )
            assert backwards == {"days": -7, "weeks": -1, "weekdays": -5}

            bad_zone = await c.call_tool("current_time", {"timezone": "Mars/Olympus"})
            assert bad_zone.is_error and "Unknown time zone" in text_of(bad_zone)
            bad_date = await c.call_tool("days_between", {"start_date": "someday", "end_date": "2025-01-01"})
            assert bad_date.is_error


def test_demo_config_names_scripts_in_the_demo_folder() -> None:
    config = json.loads((DEMO / "demo_config.json").read_text(encoding="utf-8"))
    servers = config["mcpServers"]
    assert set(servers) == {"notes", "clock"}
    for entry in servers.values():
        assert entry["command"] == "python"
        [script] = entry["args"]
        assert not Path(script).is_absolute() and (DEMO / script).is_file()


def test_the_demo_runs_the_packages_own_scripts_with_this_interpreter(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path)})
    servers = demo_config(paths).document["mcpServers"]
    for name, script in (("notes", "notes_server.py"), ("clock", "clock_server.py")):
        assert servers[name]["command"] == sys.executable
        assert servers[name]["args"] == [str(DEMO / script)]  # where it lies: nothing copied
        assert servers[name]["env"] == {"MCPMANAGER_DEMO_DIR": str(paths.cache_dir / "demo")}
    assert demo_scripts() == ["clock_server.py", "notes_server.py"]


def test_a_demo_file_inside_a_zip_is_copied_out_for_the_process(tmp_path: Path) -> None:
    """A package imported from a zip has no file for a child interpreter to run: on_disk extracts one."""
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr("mcpmanager/demo/clock_server.py", "print('tick')\n")
    copy = on_disk(zipfile.Path(archive, "mcpmanager/demo/clock_server.py"))
    assert copy.is_file() and copy.read_text() == "print('tick')\n"
    assert not copy.is_relative_to(archive)
