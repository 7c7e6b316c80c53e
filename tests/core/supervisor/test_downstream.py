"""One downstream server, fast: a `Downstream` over a fake child process (an SDK server on memory
streams) — ready after the handshake and tools/list, tools that change, calls passed through, a
crash that names its exit and stderr, a start that times out. The same paths with real processes
are in tests/e2e/test_fixture_servers.py."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.events import DownstreamEvent, StatusChanged, ToolsChanged
from mcpmanager.core.supervisor.lifecycle import State
from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer, tool

SETTINGS = SupervisorSettings(start_timeout=5, backoff_initial=30, starting_wait=2, stop_grace=0.1)


class Recorder:
    def __init__(self) -> None:
        self.events: list[DownstreamEvent] = []

    def __call__(self, event: DownstreamEvent) -> None:
        self.events.append(event)

    def states(self) -> list[State]:
        return [e.status.state for e in self.events if isinstance(e, StatusChanged)]

    def tool_lists(self) -> list[list[str]]:
        return [[t["name"] for t in e.tools] for e in self.events if isinstance(e, ToolsChanged)]


def text(result: types.CallToolResult | types.InputRequiredResult) -> str:
    assert isinstance(result, types.CallToolResult)
    return text_of(result)


@pytest.fixture
def server() -> MemoryServer:
    return MemoryServer("notes", tool("add_note", "Add a note.", text={"type": "string"}))


async def started(
    server: MemoryServer, settings: SupervisorSettings = SETTINGS
) -> tuple[Downstream, Recorder, FakeSpawner]:
    spawner, events = FakeSpawner(notes=server), Recorder()
    downstream = Downstream(StdioServerConfig("notes", "notes-server"), settings, None, events, spawner=spawner)
    downstream.start()
    await wait_for(lambda: downstream.status.state is State.READY)
    return downstream, events, spawner


async def test_ready_after_the_handshake_and_the_tool_list(server: MemoryServer) -> None:
    downstream, events, spawner = await started(server)
    try:
        assert events.states() == [State.STARTING, State.READY]
        assert events.tool_lists() == [["echo", "block", "add_note"]]
        assert downstream.process is spawner.latest("notes") and downstream.process.pid is not None
        assert downstream.protocol_version is not None
        assert "[mcpmanager] started pid" in downstream.log.tail(1)[0]
    finally:
        await downstream.stop()
    assert downstream.status.state is State.STOPPED and spawner.latest("notes").stopped
    assert events.states()[-1] is State.STOPPED  # a stop we asked for is not a crash


async def test_calls_pass_through_and_tool_changes_are_refetched(server: MemoryServer) -> None:
    downstream, events, _ = await started(server)
    try:
        assert text(await downstream.call_tool("echo", {"text": "hello"})) == "hello"
        assert server.calls == [("echo", {"text": "hello"})]
        await server.change_tools(tool("search_notes"))
        await wait_for(lambda: events.tool_lists()[-1] == ["echo", "block", "search_notes"])
        assert downstream.tools is not None and len(downstream.tools) == 3
    finally:
        await downstream.stop()


async def test_a_crash_names_its_exit_and_the_last_stderr_line(server: MemoryServer) -> None:
    downstream, _, spawner = await started(server)
    try:
        spawner.latest("notes").crash(3, "loading notes", "fatal: no API key")
        await wait_for(lambda: downstream.status.state is State.BACKOFF)
        assert downstream.status.reason == "exited 3 — fatal: no API key"
        assert downstream.status.retry_in == SETTINGS.backoff_initial
        unavailable = text(await downstream.call_tool("echo", {"text": "x"}))
        assert unavailable.startswith("Server 'notes' is unavailable (backoff: exited 3 — fatal: no API key")
        assert "  fatal: no API key" in unavailable.splitlines()  # the stderr tail, for the model
    finally:
        await downstream.stop()


async def test_a_call_in_flight_when_the_server_dies_comes_back_as_an_error(server: MemoryServer) -> None:
    downstream, _, spawner = await started(server)
    try:
        async with anyio.create_task_group() as tg:
            results: list[str] = []

            async def call() -> None:
                results.append(text(await downstream.call_tool("block", {})))

            tg.start_soon(call)
            await wait_for(lambda: server.calls)
            spawner.latest("notes").crash(137, "Killed")
        [answer] = results
        assert answer.startswith("Server 'notes' is unavailable:"), answer
        assert "'block'" in answer  # which call was cut off
    finally:
        await downstream.stop()


async def test_a_command_that_does_not_exist_fails_at_once() -> None:
    events = Recorder()
    downstream = Downstream(StdioServerConfig("gone", "missing"), SETTINGS, None, events, spawner=FakeSpawner())
    downstream.start()
    await wait_for(lambda: downstream.status.state is State.FAILED)
    assert downstream.status.reason == "command not found: missing"
    assert events.states() == [State.STARTING, State.FAILED]  # permanent: no retry


async def test_a_server_that_never_answers_the_handshake_times_out(server: MemoryServer) -> None:
    async def mute(ctx: object, params: object) -> types.ListToolsResult:
        await anyio.Event().wait()  # never answers tools/list
        raise AssertionError("unreachable")

    server.server = type(server.server)("mute", on_list_tools=mute)
    settings = SupervisorSettings(start_timeout=0.3, backoff_initial=30, stop_grace=0.1)
    spawner, events = FakeSpawner(notes=server), Recorder()
    downstream = Downstream(StdioServerConfig("notes", "notes-server"), settings, None, events, spawner=spawner)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.BACKOFF)
        assert downstream.status.reason.startswith("tools/list timed out after 0.3 s")
    finally:
        await downstream.stop()


async def test_a_call_while_it_restarts_soon_waits_for_the_new_process(server: MemoryServer) -> None:
    """A backoff within startingWait is a server coming back: the call is answered by the restarted
    process; one that backs off longer is refused at once (above)."""
    settings = SupervisorSettings(start_timeout=5, backoff_initial=0.2, starting_wait=5, stop_grace=0.1)
    downstream, _, spawner = await started(server, settings)
    try:
        first = spawner.latest("notes")
        first.crash(3, "fatal: flaky")
        await wait_for(lambda: downstream.status.state is State.BACKOFF)
        assert text(await downstream.call_tool("echo", {"text": "later"})) == "later"
        assert spawner.latest("notes") is not first and downstream.status.restarts == 1
    finally:
        await downstream.stop()
