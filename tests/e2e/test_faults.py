"""Faults a user or the world causes, one test each, with real subprocess servers (issue 15's list):
each failed before its fix."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

from mcpmanager.core.config.load import load_config, parse_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from tests.helpers.asking_clients import wait_for_tools
from tests.helpers.clients import connected, http_client, text_of
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import engines, pid_alive, stop_engines, wait_for, watchdogs
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.full_disk import fill, small_disk
from tests.helpers.serving import Served, serving_http
from tests.helpers.soak import soak


def engine_on(tmp_path: Path, servers: dict[str, Any], **supervisor: Any) -> Engine:
    """An engine (not started) on these servers, with FAST supervision and `supervisor` over it."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    document = {"mcpServers": servers, "supervisor": {**FAST, **supervisor}}
    return Engine(parse_config(json.dumps(document), "test"), paths, "direct")


async def test_a_config_file_that_vanishes_for_a_moment_stops_nothing(tmp_path: Path) -> None:
    """Editors that save by delete-and-create, and sync tools, remove the file for a moment."""
    home = tmp_path / "home"
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    paths.ensure()
    servers = {"a": fixture("--name", "a"), "b": fixture("--name", "b")}
    document = {"mcpServers": servers, "supervisor": FAST}
    paths.config_file.write_text(json.dumps(document), encoding="utf-8")
    engine = Engine(load_config(paths.config_file), paths, "direct")
    await engine.start()
    watching = spawn(engine.watch_config(interval=0.05), name="test watch")
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), 30)
        pids = {name: d.process.pid for name, d in engine.downstreams.items() if d.process}

        paths.config_file.unlink()
        await asyncio.sleep(0.5)  # ten polls with the file gone
        assert set(engine.downstreams) == {"a", "b"}
        assert all(d.status.state is State.READY for d in engine.downstreams.values())
        assert {name: d.process.pid for name, d in engine.downstreams.items() if d.process} == pids
        assert {t.server for t in engine.catalogue.tools()} == {"a", "b"}

        # Back, with a change: applied as any change is.
        servers["c"] = fixture("--name", "c")
        paths.config_file.write_text(json.dumps(document), encoding="utf-8")
        await wait_for(lambda: "c" in engine.downstreams, 10)
        assert engine.downstreams["a"].process is not None and engine.downstreams["a"].process.pid == pids["a"]
    finally:
        watching.cancel()
        await engine.stop()


async def test_a_client_line_over_the_cap_is_answered_with_an_error_and_the_engine_serves_on(tmp_path: Path) -> None:
    """A 70 MiB line on `serve --stdio` (over the 64 MiB cap) ended the engine; now it is dropped as it
    streams, answered with a parse error, and the next request is served."""
    home = tmp_path / "home"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"a": fixture("--name", "a")}, "supervisor": FAST}), encoding="utf-8")
    command = [sys.executable, "-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")},
        limit=1 << 20,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode() + b"\n"
        )
        assert json.loads(await process.stdout.readline())["id"] == 1
        process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        huge = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "' + b"y" * (70 << 20) + b'"}}\n'
        process.stdin.write(huge)
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}\n')
        await process.stdin.drain()
        answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 60)) for _ in range(2)]
        assert answers[0]["id"] == 2 and answers[0]["error"]["code"] == -32600, answers  # its id, read off its head
        assert "Message too large" in answers[0]["error"]["message"]
        assert answers[1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert process.returncode is None
    finally:
        if process.returncode is None:
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()


async def test_a_call_that_times_out_says_so_not_rejected(tmp_path: Path) -> None:
    """The SDK's read timeout used to read "rejected the call"; it is the server not answering in time."""
    engine = engine_on(tmp_path, {"a": fixture("--name", "a")}, callTimeout=0.5)
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["a"].status.state is State.READY, 30)
        result = await engine.downstreams["a"].call_tool("sleep", {"seconds": 5})
        assert isinstance(result, types.CallToolResult) and result.is_error
        assert text_of(result) == "Server 'a' did not answer 'sleep' within 0.5 s."
        assert engine.downstreams["a"].status.state is State.READY  # a slow call is not a crash
    finally:
        await engine.stop()


def test_status_into_a_pipe_that_closes_ends_quietly(tmp_path: Path) -> None:
    """`mcpmanager status | head` ended in a BrokenPipeError traceback. `true` reads nothing and exits at
    once, so the pipe is closed before mcpmanager (a second to start) writes: the broken pipe is sure."""
    env = {"MCPMANAGER_HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "")}
    script = f"{sys.executable} -m mcpmanager status --json | true"
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.stderr == "", done.stderr


async def test_connect_after_an_engine_on_another_config_starts_one_on_that_config(tmp_path: Path) -> None:
    """The window (or `serve`) ran `--config elsewhere.json`, then quit: `connect` used to start an
    engine on the default config (the demo when there is none) and the client lost its tools."""
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = write_config(tmp_path / "elsewhere", {"mine": fixture("--name", "mine")}, supervisor=FAST)
    async with serving_http(elsewhere, home):
        pass  # it ran, and stopped
    try:
        async with connected(home, mode="direct") as client:

            async def listed() -> bool:
                return "echo" in {t.name for t in (await client.list_tools()).tools}

            await wait_for(listed, timeout=60, interval=0.2)
        [engine] = engines(home)
        assert engine["config"] == str(elsewhere.resolve()) and set(engine["servers"]) == {"mine"}
    finally:
        stop_engines(home)


async def test_a_missing_command_is_said_once_in_its_log(tmp_path: Path) -> None:
    """ "command not found" was written twice to the server's log and pane."""
    engine = engine_on(tmp_path, {"gone": {"command": "definitely-not-a-command-mcpm"}})
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["gone"].status.state is State.FAILED, 30)
        lines = engine.downstreams["gone"].log.tail(50)
        assert sum("command not found" in line for line in lines) == 1, lines
    finally:
        await engine.stop()


async def test_a_miss_names_the_servers_whose_tools_are_not_known(tmp_path: Path) -> None:
    """Calling a failed server's tool said only "Unknown tool": the model could not tell it from a typo."""
    engine = engine_on(tmp_path, {"a": fixture("--name", "a"), "gone": {"command": "definitely-not-a-command-mcpm"}})
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["gone"].status.state is State.FAILED, 30)
        await wait_for(lambda: engine.downstreams["a"].status.state is State.READY, 30)
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            missed = await client.call_tool("query_records", {})
            known = await client.call_tool("echo", {"text": "hi"})
        assert missed.is_error and text_of(missed).startswith("Unknown tool 'query_records'.")
        assert "the tools of 'gone' (failed: command not found" in text_of(missed), text_of(missed)
        assert not known.is_error  # a known name is not held up by the failed server
    finally:
        await engine.stop()


async def test_a_request_waits_only_for_a_server_that_could_own_its_name(tmp_path: Path) -> None:
    """A call to a healthy server waited for every starting server (here one that hangs at initialize:
    startingWait, 10 minutes); and a prompt asked for while its server started was "Unknown"."""
    servers = {
        "fast": fixture("--name", "fast", "--start-delay", "1"),
        "conf": conformance_fixture(),
        "stuck": fixture("--name", "stuck", "--hang-at-init"),
    }
    engine = engine_on(tmp_path, servers, startTimeout=600, startingWait=600)
    await engine.start()
    try:
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            assert engine.downstreams["fast"].status.state is State.STARTING
            with anyio.fail_after(60):  # against the 600 s it waited before, not a speed target
                named = await client.call_tool("fast__whoami", {})
                bare = await client.call_tool("echo", {"text": "hi"})  # conf has no echo, stuck may have
                prompt = await client.get_prompt("test_simple_prompt")
                completed = await client.complete(
                    types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "par"}
                )
        assert text_of(named).startswith("fast "), text_of(named)
        assert text_of(bare) == "hi"
        assert prompt.messages, prompt
        assert completed.completion.values == ["paris", "park", "party"]
        assert engine.downstreams["stuck"].status.state is State.STARTING
    finally:
        await engine.stop()


async def test_a_crash_mid_call_says_how_it_ended_and_the_next_calls_wait_for_the_restart(tmp_path: Path) -> None:
    """It read "connection closed during the call to 'boom' (ready)": the crash was recorded only once
    the process group was reaped (here a grandchild that ignores SIGTERM holds that up for a stop
    step), and the calls right after it were cut off too, or refused while it backed off."""
    pidfile = tmp_path / "grandchild.pid"
    servers = {"boom": fixture("--name", "boom", "--boom", "--stubborn", "--grandchild", str(pidfile))}
    engine = engine_on(tmp_path, servers, stopGrace=2)
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["boom"].status.state is State.READY, 30)
        await wait_for(pidfile.exists, 10)
        grandchild = int(pidfile.read_text())
        async with Client(engine.router.server, mode="legacy", cache=None) as client:
            crashed = await client.call_tool("boom", {})
            after = [await client.call_tool("echo", {"text": f"after {i}"}) for i in range(3)]
        said = text_of(crashed)
        assert crashed.is_error and "the connection closed during the call to 'boom'" in said, said
        assert "(backoff: exited 3 — fatal: boom" in said and "(ready)" not in said, said
        assert [text_of(result) for result in after] == ["after 0", "after 1", "after 2"]
        assert not pid_alive(grandchild)  # reaped all the same, before the restart
    finally:
        await engine.stop()


def stubborn_servers(tmp_path: Path, count: int) -> tuple[dict[str, Any], list[Path]]:
    """Servers that ignore SIGTERM and the end of stdin, each with a grandchild that ignores SIGTERM."""
    pidfiles = [tmp_path / f"grandchild-{i}.pid" for i in range(count)]
    servers = {
        f"s{i}": fixture("--name", f"s{i}", "--stubborn", "--grandchild", str(pidfile))
        for i, pidfile in enumerate(pidfiles)
    }
    return servers, pidfiles


async def serve_stdio_process(config: Path, home: Path) -> asyncio.subprocess.Process:
    command = [sys.executable, "-m", "mcpmanager", "serve", "--stdio", "--config", str(config)]
    env = {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )


async def server_processes(home: Path, names: list[str], pidfiles: list[Path]) -> list[int]:
    """The servers' pids (from the engine's advertisement, once all are ready) and their grandchildren's."""

    def all_ready() -> bool:
        found = engines(home)
        return len(found) == 1 and all(found[0]["servers"].get(n, {}).get("state") == "ready" for n in names)

    await wait_for(all_ready, 30)
    await wait_for(lambda: all(p.exists() for p in pidfiles), 10)
    servers = engines(home)[0]["servers"]
    return [int(servers[n]["pid"]) for n in names] + [int(p.read_text()) for p in pidfiles]


def end_all(engine: asyncio.subprocess.Process, pids: list[int]) -> None:
    """A failing test leaves nothing running either."""
    if engine.returncode is None:
        engine.kill()
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


async def test_nothing_a_killed_engine_ran_survives_the_next_engines_start(tmp_path: Path) -> None:
    """`kill -9` of the engine left every server that ignores EOF, and all grandchildren, running with
    parent 1, and the next engine did not clean them up. (The second line: the engine's watchdog,
    which ends them at once, is killed first, as a SIGKILL of everything would: test_watchdog.py.)"""
    home = tmp_path / "home"
    servers, pidfiles = stubborn_servers(tmp_path, 2)
    config = write_config(tmp_path / "cfg", servers, supervisor=FAST)
    engine = await serve_stdio_process(config, home)
    pids: list[int] = []
    try:
        pids += await server_processes(home, list(servers), pidfiles)
        [watchdog] = watchdogs(home)
        os.kill(watchdog, signal.SIGKILL)
        await wait_for(lambda: not pid_alive(watchdog), 5)
        engine.kill()
        await engine.wait()
        await asyncio.sleep(0.5)
        assert all(pid_alive(pid) for pid in pids)  # stubborn: the end of stdin did not end them
        nothing = write_config(tmp_path / "empty", {}, supervisor=FAST)
        async with serving_http(nothing, home):
            await wait_for(lambda: not any(pid_alive(pid) for pid in pids), 10)
        assert not list((home / "run" / "groups").glob("*.json"))  # the record went with them
    finally:
        end_all(engine, pids)


async def test_a_sigterm_while_stopping_goes_to_the_end_of_the_ladder(tmp_path: Path) -> None:
    """A client closes our stdin, gives us about 2 s, then SIGTERM, then SIGKILL: the SIGTERM was ignored
    while stopping, and stubborn servers (2 x stopGrace to stop) were orphaned by the SIGKILL."""
    home = tmp_path / "home"
    servers, pidfiles = stubborn_servers(tmp_path, 2)
    config = write_config(tmp_path / "cfg", servers, supervisor={**FAST, "stopGrace": 30})
    engine = await serve_stdio_process(config, home)
    pids: list[int] = []
    try:
        pids += await server_processes(home, list(servers), pidfiles)
        assert engine.stdin is not None
        engine.stdin.close()  # the client is done: the stop ladder begins (60 s for these servers)
        await asyncio.sleep(1)
        assert engine.returncode is None
        engine.terminate()
        await asyncio.wait_for(engine.wait(), 20)  # against the 60 s ladder, not a speed target
        assert not [pid for pid in pids if pid_alive(pid)]
    finally:
        end_all(engine, pids)


async def test_a_second_signal_while_the_calls_in_flight_have_their_grace_still_ends_every_server(
    tmp_path: Path,
) -> None:
    """The first SIGTERM gives the calls in flight a second before the engine stops its servers. A
    second signal in that second means "now", as it does later in the stop: it fell to the default
    handler there (the first one's receiver had put it back), and the engine died on the spot,
    leaving stubborn servers and their grandchildren running."""
    home = tmp_path / "home"
    servers, pidfiles = stubborn_servers(tmp_path, 2)
    config = write_config(tmp_path / "cfg", servers, supervisor={**FAST, "stopGrace": 30})
    pids: list[int] = []
    async with serving_http(config, home) as served:
        try:
            pids += await server_processes(home, list(servers), pidfiles)
            async with http_client(served.url, served.token) as client:
                await wait_for_tools(client, {"s0__sleep"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_in_flight, served)
                await wait_for(lambda: "sleeping 30s" in (home / "logs" / "s0.log").read_text(), timeout=10)
                served.process.send_signal(signal.SIGTERM)  # the call in flight gets its second
                await anyio.sleep(0.3)
                assert served.process.poll() is None
                served.process.send_signal(signal.SIGTERM)  # now
                await wait_for(lambda: served.process.poll() is not None, timeout=20)  # against 60 s of ladder
                assert not [pid for pid in pids if pid_alive(pid)]
                assert served.process.returncode == 0
                tg.cancel_scope.cancel()
        finally:
            for pid in pids:
                if pid_alive(pid):
                    os.kill(pid, signal.SIGKILL)


async def call_in_flight(served: Served) -> None:
    """A call that is still running when the engine stops; how it ends is not what is tested (its
    server is killed), nor how its client takes that."""
    with contextlib.suppress(Exception):
        async with http_client(served.url, served.token) as client:
            await client.call_tool("s0__sleep", {"seconds": 30})


def status_output(home: Path, *flags: str) -> str:
    """What `mcpmanager status` prints for the engines under `home`."""
    env = {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    command = [sys.executable, "-m", "mcpmanager", "status", *flags]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60).stdout


def engine_info(home: Path) -> dict[str, Any]:
    [engine] = json.loads(status_output(home, "--json"))["engines"]
    return dict(engine)


def status_json(home: Path) -> dict[str, Any]:
    """The servers in `mcpmanager status --json` of the one engine running under `home`."""
    return dict(engine_info(home)["servers"])


async def test_a_full_disk_for_logs_takes_nothing_down(tmp_path: Path) -> None:
    """Servers stayed "ready" while every call answered `unavailable (ready)`, and the stop ended in a
    traceback. Now the server serves on, its state says the log cannot be written, and the log file
    takes up again once the disk has room."""
    home = tmp_path / "home"
    logs = home / "logs"
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    with small_disk(logs):
        async with serving_http(config, home) as served, http_client(served.url, served.token) as client:
            await wait_for_tools(client, {"echo"})
            filler = fill(logs)
            wrote = await client.call_tool("stderr", {"lines": 100, "text": "x" * 200})  # 20 KB: new pages
            assert text_of(wrote) == "wrote 100 lines"
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
            await wait_for(lambda: "No space left" in str(status_json(home)["a"].get("logs")), 10)
            assert status_json(home)["a"]["state"] == "ready"

            filler.unlink()
            await client.call_tool("stderr", {"lines": 1, "text": "the disk has room"})

            async def written_again() -> bool:
                # The file is tried again a while after the failure, when the server writes more:
                # the lines the ring kept meanwhile come first.
                await client.call_tool("stderr", {"lines": 1, "text": "later"})
                return "the disk has room 1" in (logs / "a.log").read_text()

            await wait_for(written_again, 10, interval=0.5)
            await wait_for(lambda: status_json(home)["a"].get("logs") is None, 10)
        said = served.errlog.read_text()
        assert "Traceback" not in said, said


async def test_a_list_changed_storm_costs_one_refetch(tmp_path: Path) -> None:
    """Each tools/list_changed was a tools/list of its own: 40 changes in 0.4 s were 40 listings."""
    engine = engine_on(tmp_path, {"a": fixture("--name", "a", "--storm")})
    await engine.start()
    try:
        await wait_for(lambda: engine.downstreams["a"].status.state is State.READY, 30)
        downstream = engine.downstreams["a"]

        async def listings() -> int:
            result = await downstream.call_tool("listings", {})
            assert isinstance(result, types.CallToolResult)
            return int(text_of(result))

        before = await listings()
        await downstream.call_tool("storm", {"count": 40, "gap": 0.01})

        async def refetched() -> bool:
            return await listings() > before

        await wait_for(refetched, 10)
        await asyncio.sleep(1)  # a window for more listings to show up: there must be none (or one)
        assert await listings() - before <= 2
    finally:
        await engine.stop()


async def test_a_rejected_config_edit_shows_in_status(tmp_path: Path) -> None:
    """A broken edit of the config file was only on the engine's stderr, which nobody reads when a
    client started the engine; `status` (and `--json`) now say it until a good edit is applied."""
    home = tmp_path / "home"
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    good = config.read_text()
    async with serving_http(config, home):
        await wait_for(lambda: engine_info(home)["servers"]["a"]["state"] == "ready", 30)
        config.write_text(good.replace('"mcpServers"', '"mcpServers" :: '))
        await wait_for(lambda: engine_info(home).get("config_error"), 10)
        said = engine_info(home)["config_error"]
        assert said.startswith(f"{config}:2:") and "invalid JSON" in said, said
        shown = status_output(home)
        assert f"config change refused (the running setup stays): {said}" in shown, shown
        assert engine_info(home)["servers"]["a"]["state"] == "ready"  # the running setup stays
        config.write_text(good.replace('"a"', '"b"'))
        await wait_for(lambda: "b" in engine_info(home)["servers"], 10)
        assert engine_info(home)["config_error"] is None


async def test_a_server_crashing_on_some_calls_costs_only_the_call_in_flight(tmp_path: Path) -> None:
    """The soak, short (tests/bench/bench_soak.py runs the long one): calls right after a crash were
    cut off too (about 8 per crash), or refused while the server backed off."""
    found = await soak(tmp_path / "home", calls=400, crash_rate=0.03)
    assert found.unanswered == 0 and found.answered == 400
    assert found.other_errors == [] and found.engine_errors == []
    assert found.cut_off == found.restarts > 0  # exactly the call in flight at each crash


async def test_a_full_disk_for_everything_loses_no_advertisement_for_good(tmp_path: Path) -> None:
    """The advertisement (what `status` and `connect` read) and the catalogue cache were not written
    on a full disk, and stayed unwritten; now each is tried again and written once there is room,
    and a failed write leaves no temporary file behind."""
    home = tmp_path / "home"
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a", "--boom")}, supervisor=FAST)
    with small_disk(home, "4m"):
        serving = serving_http(config, home, errlog=tmp_path / "serve-stderr.log")
        async with serving as served, http_client(served.url, served.token) as client:
            await wait_for_tools(client, {"boom"})
            filler = fill(home)
            await client.call_tool("boom", {})  # a crash: its state changes, the advertisement is due
            await wait_for(lambda: "cannot write the runtime advertisement" in served.errlog.read_text(), 10)
            assert status_json(home)["a"]["restarts"] == 0  # what was written last
            leftovers = [p.name for p in home.rglob("*.tmp")]
            assert leftovers == [], leftovers
            filler.unlink()
            await wait_for(lambda: status_json(home)["a"]["restarts"] == 1, 15)
        assert (home / "cache" / "catalogue.json").exists()
        said = served.errlog.read_text()
        assert "Traceback" not in said, said
