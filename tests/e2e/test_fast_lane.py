"""The fast lane for tools/call (`proxy/fast_lane`), with real subprocess servers and the SDK's client
on the engine's own server: every call the lane takes must come back exactly as the full path answers
it (results, error texts, activity), what a server asks or logs during it must still reach the
client, a cancelled call must be cancelled at the server, and every call the lane must not take
(progress wanted, arguments to repair, a name to resolve, asking first, another protocol version)
goes the full path."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.core.sdk_compat import pass_results_through
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.asking_clients import Answering
from tests.helpers.clients import text_of
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, FIXTURES, fixture
from tests.helpers.piped import PIPED, VIAS, connected


@asynccontextmanager
async def engine_with(
    tmp_path: Path, servers: dict[str, Any], mode: str = "direct", **sections: Any
) -> AsyncIterator[Engine]:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path / "home")})
    supervisor = {**FAST, **sections.pop("supervisor", {})}
    document = {"mcpServers": servers, "supervisor": supervisor, **sections}
    engine = Engine(parse_config(json.dumps(document), "test"), paths, mode)  # type: ignore[arg-type]
    await engine.start()
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), 30)
        yield engine
    finally:
        await engine.stop()


class SharedEngines:
    """One engine per set of servers for the tests that leave it as they found it (what they count
    they count from before their own calls, and the lane is on again after): started by the first
    such test, stopped with the module (a loop of its own: module scope)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.engines: dict[str, Engine] = {}

    async def engine(self, servers: dict[str, Any]) -> Engine:
        key = json.dumps(servers, sort_keys=True)
        if key not in self.engines:
            home = self.folder / f"engine-{len(self.engines)}"
            paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home / "home")})
            document = {"mcpServers": servers, "supervisor": FAST}
            engine = Engine(parse_config(json.dumps(document), "test"), paths, "direct")
            self.engines[key] = engine
            await engine.start()
            await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), 30)
        engine = self.engines[key]
        assert engine.router.fast_lane.enabled  # (left on by the test before)
        return engine


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedEngines]:
    engines = SharedEngines(tmp_path_factory.mktemp("fast-lane"))
    try:
        yield engines
    finally:
        for engine in engines.engines.values():
            await engine.stop()


SHARED = pytest.mark.asyncio(loop_scope="module")  # the loop the shared engines run on


async def both_ways(engine: Engine, client: Client, tool: str, arguments: dict[str, Any]) -> list[Any]:
    """The same call through the lane and the full path: (result as a dict, its activity record) each.
    A handshake-era client on a pipe has it taken ahead of the SDK's session (`wire_lane`)."""
    lane = engine.router.fast_lane
    ahead = piped(client)
    outcomes = []
    for enabled in (True, False):
        lane.enabled = enabled
        taken, before = lane.taken, lane.ahead
        result = await client.call_tool(tool, arguments)
        assert lane.taken == taken + (1 if enabled else 0), f"enabled={enabled}: taken {lane.taken - taken}"
        assert lane.ahead == before + (enabled and ahead), f"enabled={enabled}: ahead {lane.ahead - before}"
        record = engine.router.activity.records()[-1]
        outcomes.append((result.model_dump(mode="json", by_alias=True, exclude_none=True), comparable(record)))
    lane.enabled = True
    return outcomes


def piped(client: Client) -> int:
    """1 if `client`'s plain calls are taken ahead of the SDK's session (on a pipe or HTTP, in
    either era: `wire_lane`, `serve/modern_first`)."""
    return int(id(client) in PIPED)


def comparable(record: CallRecord) -> dict[str, Any]:
    return {
        "called": record.called,
        "via": record.via,
        "server": record.server,
        "tool": record.tool,
        "how": record.how,
        "outcome": record.outcome,
        "detail": record.detail,
        "renames": record.renames,
    }


@SHARED
@pytest.mark.parametrize("via", VIAS)
async def test_a_plain_call_takes_the_lane_and_comes_back_as_the_full_path_answers_it(
    shared: SharedEngines, via: str
) -> None:
    engine = await shared.engine({"a": fixture("--name", "a")})
    async with connected(engine, via, mode="legacy", cache=None) as client:
        fast, full = await both_ways(engine, client, "echo", {"text": "héllo, wörld"})
        assert fast == full
        assert fast[0]["structuredContent"] == {"text": "héllo, wörld"}
        assert fast[1]["outcome"] == "ok"
        fast, full = await both_ways(engine, client, "add", {"a": 2, "b": 40})
        assert fast == full and "42" in json.dumps(fast[0])


@pytest.mark.parametrize("via", VIAS)
async def test_failures_read_the_same_through_the_lane(tmp_path: Path, via: str) -> None:
    """A tool's own error result, a server's protocol error, a call past its time and a server that
    dies under the call: the same text, outcome and activity detail either way."""
    async with (
        engine_with(tmp_path, {"a": fixture("--name", "a", "--boom")}, supervisor={"callTimeout": 1.5}) as engine,
        connected(engine, via, mode="legacy", cache=None) as client,
    ):
        fast, full = await both_ways(engine, client, "fail", {"message": "disk on fire"})
        assert fast == full and fast[1]["outcome"] == "error" and "disk on fire" in fast[1]["detail"]

        fast, full = await both_ways(engine, client, "sleep", {"seconds": 5})
        assert fast == full
        assert fast[1]["detail"] == "Server 'a' did not answer 'sleep' within 1.5 s."

        texts = []
        for enabled in (True, False):
            engine.router.fast_lane.enabled = enabled
            taken = engine.router.fast_lane.taken
            result = await client.call_tool("boom", {})
            assert result.is_error and engine.router.fast_lane.taken == taken + enabled
            texts.append(text_of(result))
            downstream = engine.downstreams["a"]
            await wait_for(lambda d=downstream: d.status.state is State.READY, 30)
        engine.router.fast_lane.enabled = True
        # The same sentence; the backoff grows with each crash and the stderr tail below it with each start.
        first = [re.sub(r"retry in [0-9.]+ s", "retry in N s", text.splitlines()[0]) for text in texts]
        assert first[0] == first[1]
        assert "the connection closed during the call to 'boom' (backoff: exited 3 — fatal: boom" in first[0]


@pytest.mark.parametrize("via", VIAS)
@pytest.mark.parametrize("lane", [True, False], ids=["lane", "full path"])
async def test_a_call_the_client_cancels_is_cancelled_at_the_server(tmp_path: Path, via: str, lane: bool) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:
        engine.router.fast_lane.enabled = lane
        log = engine.downstreams["a"].log
        async with connected(engine, via, mode="legacy", cache=None) as client:
            taken, ahead = engine.router.fast_lane.taken, engine.router.fast_lane.ahead
            with anyio.move_on_after(30):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, "sleep", {"seconds": 60})
                    await wait_for(lambda: any("sleeping 60" in line for line in log.tail(100)), 10)
                    tg.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
            assert engine.router.fast_lane.taken == taken + lane
            assert engine.router.fast_lane.ahead == ahead + (lane and piped(client))
            await wait_for(lambda: any("cancelled sleep" in line for line in log.tail(100)), 10)

            # The activity says so (it said "pending" for ever), with how long the call ran.
            def slept() -> CallRecord:
                return next(r for r in engine.router.activity.records() if r.called == "sleep")

            await wait_for(lambda: slept().outcome != "pending", 10)
            assert slept().outcome == "cancelled" and slept().duration is not None
            assert engine.router.activity.stats["a:sleep"].errors == 0  # (no fault of the tool's)
            # The session with the server is fine after it: the next call is answered.
            result = await client.call_tool("echo", {"text": "still here"})
            assert text_of(result) == "still here"
        assert engine.router.callers.on("a") == []


@SHARED
@pytest.mark.parametrize("via", VIAS)
async def test_what_a_server_asks_and_logs_during_a_lane_call_reaches_its_client(
    shared: SharedEngines, via: str
) -> None:
    engine = await shared.engine({"old": conformance_fixture("--handshake-only")})
    answering = Answering()
    async with connected(engine, via, mode="legacy", cache=None, **answering.callbacks()) as client:
        lane = engine.router.fast_lane
        taken, ahead = lane.taken, lane.ahead
        result = await client.call_tool("test_sampling", {"prompt": "What is 2+2?"})
        assert answering.prompts == ["What is 2+2?"]
        assert Answering.reply_to("What is 2+2?") in text_of(result)
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert "ada" in text_of(result) and len(answering.forms) == 1
        await client.call_tool("test_tool_with_logging", {})
        await wait_for(lambda: len(answering.logs) >= 3, 10)
        assert [log.logger for log in answering.logs[:3]] == ["old/conformance-server"] * 3
        assert lane.taken == taken + 3 and lane.ahead == ahead + 3 * piped(client)


@pytest.mark.parametrize("via", VIAS)
async def test_a_fault_of_mcpmanager_s_own_during_a_call_is_answered_as_the_sdk_answers_it(
    tmp_path: Path, via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: on the lane ahead of the session, a fault outside the call's own boundary
    (here: recording the call for learning) left the client waiting for ever."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:

        def broken(*args: Any) -> None:
            raise RuntimeError("learning broke")

        monkeypatch.setattr(engine.router.learning, "called", broken)
        errors = []
        async with connected(engine, via, mode="legacy", cache=None) as client:
            for enabled in (True, False):
                engine.router.fast_lane.enabled = enabled
                with anyio.fail_after(10), pytest.raises(MCPError) as raised:
                    await client.call_tool("echo", {"text": "x"})
                errors.append((raised.value.error.code, raised.value.error.message))
            engine.router.fast_lane.enabled = True
            assert engine.router.fast_lane.ahead == piped(client)
        assert errors == [(0, "learning broke")] * 2


@pytest.mark.parametrize("via", VIAS)
async def test_calls_the_lane_must_not_take_go_the_full_path(tmp_path: Path, via: str) -> None:
    tools = {"a:fail": {"approval": "ask"}}
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}, tools=tools) as engine:
        lane = engine.router.fast_lane
        async with connected(engine, via, mode="legacy", cache=None) as client:
            taken = lane.taken
            reported: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                reported.append(progress)

            result = await client.call_tool("slow", {"seconds": 0.2, "steps": 2}, progress_callback=on_progress)
            assert not result.is_error and reported  # progress relayed: the full path's
            assert lane.taken == taken, "progress"
            result = await client.call_tool("echo", {"txt": "renamed"})  # an argument to repair
            assert text_of(result) == "renamed" and lane.taken == taken, "a renamed argument"
            result = await client.call_tool("a__echo", {"text": "resolved"})  # a name to resolve: resolved once
            assert text_of(result) == "resolved" and lane.taken == taken, "a name to resolve"
            result = await client.call_tool("fail", {"message": "x"})  # asking first: nobody to ask
            assert result.is_error and "approval" in text_of(result) and lane.taken == taken, "asking first"


@SHARED
@pytest.mark.parametrize("via", VIAS)
async def test_a_2026_server_behind_a_handshake_era_client_is_answered_alike(shared: SharedEngines, via: str) -> None:
    """The lane sieves a 2026-07-28 server's result into the client's version (no `resultType`, no
    server stamp), as the full path does; a question such a server returns goes the full path's way.
    (Without the tasks extension: a server that speaks it may answer any call with a task, so its
    calls take the full path, `tasks`.)"""
    engine = await shared.engine({"new": conformance_fixture("--no-tasks")})
    assert engine.downstreams["new"].protocol_version == "2026-07-28"
    answering = Answering()
    async with connected(engine, via, mode="legacy", cache=None, **answering.callbacks()) as client:
        fast, full = await both_ways(engine, client, "test_simple_text", {})
        assert fast == full and fast[1]["outcome"] == "ok"
        fast, full = await both_ways(engine, client, "test_sampling", {"prompt": "Why?"})
        assert fast == full and answering.prompts == ["Why?", "Why?"]


@pytest.mark.parametrize("via", VIAS)
async def test_in_discovery_mode_a_catalogue_tool_by_name_or_through_call_tool_takes_the_lane(
    tmp_path: Path, via: str
) -> None:
    """Discovery's call_tool of a catalogue tool by its name is the call it wraps: the lane takes it and
    answers it as the full path does (the record says "call_tool"); discover_tools, and a call_tool
    whose name must be resolved or whose arguments repaired, go the full path."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}, mode="discovery") as engine:
        lane = engine.router.fast_lane
        async with connected(engine, via, mode="legacy", cache=None) as client:
            taken = lane.taken
            [echo] = [t.exposed for t in engine.catalogue.tools() if t.name == "echo"]
            found = await client.call_tool("discover_tools", {"query": "echo text back"})
            assert echo in text_of(found) and lane.taken == taken
            wrapped = {"tool_name": echo, "arguments": {"text": "meta"}}
            fast, full = await both_ways(engine, client, "call_tool", wrapped)
            assert fast == full and fast[0]["content"][0]["text"] == "meta"
            assert fast[1]["via"] == "call_tool" and fast[1]["called"] == echo and fast[1]["outcome"] == "ok"
            taken = lane.taken
            as_text = {"tool_name": echo, "arguments": json.dumps({"text": "stringified"})}  # models do
            result = await client.call_tool("call_tool", as_text)
            assert text_of(result) == "stringified" and lane.taken == taken + 1
            result = await client.call_tool("call_tool", {"tool_name": echo, "arguments": {"txt": "renamed"}})
            assert text_of(result) == "renamed" and lane.taken == taken + 1, "an argument to repair"
            result = await client.call_tool("call_tool", {"tool_name": "a__echo", "arguments": {"text": "resolved"}})
            assert text_of(result) == "resolved" and lane.taken == taken + 1, "a name to resolve"
            result = await client.call_tool("call_tool", {"tool_name": echo, "arguments": "not json"})
            assert result.is_error and "JSON" in text_of(result) and lane.taken == taken + 1, "arguments unreadable"
            result = await client.call_tool(echo, {"text": "direct by name"})
            assert text_of(result) == "direct by name" and lane.taken == taken + 2
            assert lane.ahead == 3 * piped(client)
        records = [r for r in engine.router.activity.records() if r.called == echo]
        assert records and records[-1].outcome == "ok" and records[-1].server == "a" and records[-1].via == "direct"


SCRIPTED = {"command": sys.executable, "args": [str(FIXTURES / "scripted_server.py")]}


@pytest.mark.parametrize("via", VIAS)
async def test_protocol_errors_and_shapeless_results_read_the_same_through_the_lane(tmp_path: Path, via: str) -> None:
    """A server's JSON-RPC errors, and results no client could read (found in review: the full path
    said "cut off (ValidationError)", as if the server had died; now both say what happened). An
    error the spec defines (the server's -32602) reaches the client as that error both ways."""
    async with (
        engine_with(tmp_path, {"r": SCRIPTED}) as engine,
        connected(engine, via, mode="legacy", cache=None) as client,
    ):
        for tool in ("bigerror", "nocontent", "badcontent", "meta", "extra"):
            fast, full = await both_ways(engine, client, tool, {"x": "1"})
            assert fast == full, tool
        lane, errors = engine.router.fast_lane, []
        for enabled in (True, False):
            lane.enabled, taken = enabled, lane.taken
            with pytest.raises(MCPError) as raised:
                await client.call_tool("proto_error", {"x": "1"})
            assert lane.taken == taken + enabled
            error = raised.value.error
            errors.append((error.code, error.message, error.data, comparable(engine.router.activity.records()[-1])))
        lane.enabled = True
        assert errors[0] == errors[1]
        assert errors[0][:3] == (-32602, "bad x", {"x": 1})
        assert errors[0][3]["detail"] == "bad x"
        fast, _full = await both_ways(engine, client, "nocontent", {"x": "1"})
        assert fast[1]["detail"] == "Server 'r' answered 'nocontent' with an unknown result shape."


@pytest.mark.parametrize("via", VIAS)
async def test_what_a_server_logs_just_before_its_answer_stays_with_the_caller(tmp_path: Path, via: str) -> None:
    """Found in review: the lane left the call's record of being in flight before the session had
    handled the log messages read just before the answer, so they went to every other client."""
    async with engine_with(tmp_path, {"r": SCRIPTED}) as engine:
        caller, other = Answering(), Answering()
        async with (
            connected(engine, via, mode="legacy", cache=None, **caller.callbacks()) as mine,
            connected(engine, via, mode="legacy", cache=None, **other.callbacks()) as theirs,
        ):
            await theirs.list_tools()  # known to the engine, so a broadcast would reach it
            taken, ahead = engine.router.fast_lane.taken, engine.router.fast_lane.ahead
            for _ in range(10):
                await mine.call_tool("logs", {"x": "1"})
            await anyio.sleep(0.3)
            assert engine.router.fast_lane.taken == taken + 10
            assert engine.router.fast_lane.ahead == ahead + 10 * piped(mine)
            assert len(caller.logs) == 30 and other.logs == []


@pytest.mark.parametrize("via", VIAS)
async def test_a_client_that_only_calls_is_told_of_changes(tmp_path: Path, via: str) -> None:
    """Found in review: the lane did not keep a handshake-era client's session as the handlers do,
    so a client that never listed (the SDK's client lists first) heard of no change."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:
        heard: list[object] = []

        async def on_message(message: object) -> None:
            heard.append(message)

        async with connected(engine, via, mode="legacy", cache=None, message_handler=on_message) as client:
            pass_results_through(client)  # calls without listing first
            taken = engine.router.fast_lane.taken
            await client.call_tool("echo", {"text": "x"})
            assert engine.router.fast_lane.taken == taken + 1 and engine.router.fast_lane.ahead == piped(client)
            assert len(engine.router.mode_server().legacy_sessions()) == 1
            engine.router.mode_server().reset_notified()
            engine.router.mode_server()._notified = {False: [], True: []}  # as if the catalogue had changed since
            await engine.router.refresh()
            await wait_for(lambda: any(isinstance(m, types.ToolListChangedNotification) for m in heard), 5)


@pytest.mark.parametrize("via", VIAS)
async def test_a_server_that_takes_only_integer_ids_is_called_through_the_lane(tmp_path: Path, via: str) -> None:
    """Found in review: the lane's ids were strings, which such a server refuses (an error with a
    null id), and the call waited for its timeout."""
    server = {**SCRIPTED, "args": [*SCRIPTED["args"], "--int-ids-only"]}
    async with (
        engine_with(tmp_path, {"r": server}, supervisor={"callTimeout": 5}) as engine,
        connected(engine, via, mode="legacy", cache=None) as client,
    ):
        fast, full = await both_ways(engine, client, "ok", {"x": "1"})
        assert fast == full and fast[1]["outcome"] == "ok"


@SHARED
@pytest.mark.parametrize("via", VIAS)
async def test_a_2026_client_takes_the_lane_and_is_answered_alike(shared: SharedEngines, via: str) -> None:
    """A 2026-07-28 client's answer gets its resultType and mcpmanager's own stamp as the SDK gives a
    handler's; a question a handshake-era server asks during the call parks it, the client answers
    and retries (the full path resumes it), as without the lane."""
    engine = await shared.engine({"a": fixture("--name", "a"), "old": conformance_fixture("--handshake-only")})
    answering = Answering()
    async with connected(engine, via, mode="auto", cache=None, **answering.callbacks()) as client:
        assert client.protocol_version == "2026-07-28"
        fast, full = await both_ways(engine, client, "echo", {"text": "modern"})
        assert fast == full and fast[0]["structuredContent"] == {"text": "modern"}
        fast, full = await both_ways(engine, client, "fail", {"message": "modern failure"})
        assert fast == full and fast[1]["outcome"] == "error"
        fast, full = await both_ways(engine, client, "test_simple_text", {})  # a handshake-era server's
        assert fast == full and fast[1]["outcome"] == "ok"
        fast, full = await both_ways(engine, client, "test_sampling", {"prompt": "Who?"})
        assert fast == full and answering.prompts == ["Who?", "Who?"]
        assert Answering.reply_to("Who?") in json.dumps(fast[0])
