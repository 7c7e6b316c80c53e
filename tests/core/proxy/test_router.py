"""The router as clients meet it, fast: the SDK's client on memory streams in front of a router over
two fake servers — both modes' tool lists, calls by any name, the meta-tools, refusals as isError
results, the activity log, and list_changed when what a mode lists changes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.config.settings import SupervisorSettings, ToolSettings
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.events import DownstreamEvent, ToolsChanged
from mcpmanager.core.supervisor.lifecycle import State
from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.memory_servers import MemoryServer, tool

SETTINGS = SupervisorSettings(start_timeout=5, starting_wait=0.5, stop_grace=0.1)
STRING = {"type": "string"}


class Setup:
    """Two servers (`notes`, `files`), both with `echo` (so it clashes), each with a tool of its own."""

    def __init__(self) -> None:
        self.catalogue = Catalogue()
        self.servers = {
            "notes": MemoryServer("notes", tool("add_note", "Add a note to the notebook.", body=STRING)),
            "files": MemoryServer("files", tool("delete_file", "Delete a file.", path=STRING)),
        }
        self.spawner = FakeSpawner(**self.servers)
        self.downstreams: dict[str, Downstream] = {}
        self.catalogue.configure(list(self.servers), {"notes:add_note": ToolSettings(aliases=["jot"])})

    def listen(self, event: DownstreamEvent) -> None:
        if isinstance(event, ToolsChanged):
            self.catalogue.set_tools(event.server, event.tools)

    async def start(self) -> None:
        for name in self.servers:
            config = StdioServerConfig(name, f"{name}-server")
            self.downstreams[name] = Downstream(config, SETTINGS, None, self.listen, spawner=self.spawner)
            self.downstreams[name].start()
        await wait_for(lambda: all(d.status.state is State.READY for d in self.downstreams.values()), 5)

    async def stop(self) -> None:
        for downstream in self.downstreams.values():
            await downstream.stop()


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    made = Setup()
    await made.start()
    try:
        yield made
    finally:
        await made.stop()


def router(setup: Setup, mode: Mode) -> Router:
    made = Router(setup.catalogue, setup.downstreams, mode)
    made.reset_notified()
    return made


async def test_direct_mode_lists_every_tool_under_its_exposed_name(setup: Setup) -> None:
    async with Client(router(setup, "direct").server, mode="legacy", cache=None) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == ["notes__echo", "notes__block", "add_note", "files__echo", "files__block", "delete_file"]


async def test_discovery_mode_lists_the_meta_tools_and_routes_by_any_name(setup: Setup) -> None:
    proxy = router(setup, "discovery")
    async with Client(proxy.server, mode="legacy", cache=None) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["discover_tools", "search_tools_regex", "get_tool_schema", "call_tool"]
        found = await client.call_tool("discover_tools", {"query": "add a note to my notebook"})
        assert (found.structured_content or {})["tools"][0]["name"] == "add_note"
        by_meta = await client.call_tool("call_tool", {"tool_name": "jot", "arguments": {"body": "milk"}})
        direct = await client.call_tool("notes:add_note", {"body": "eggs"})  # a namespaced spelling
    assert not by_meta.is_error and not direct.is_error
    assert setup.servers["notes"].calls == [("add_note", {"body": "milk"}), ("add_note", {"body": "eggs"})]
    records = proxy.activity.records()
    assert [(r.called, r.how, r.outcome) for r in records] == [
        ("jot", "alias", "ok"),
        ("notes:add_note", "namespaced", "ok"),
    ]


async def test_wrong_names_and_arguments_are_answered_not_forwarded(setup: Setup) -> None:
    async with Client(router(setup, "direct").server, mode="legacy", cache=None) as client:
        unknown = await client.call_tool("frobnicate_widgets", {})
        ambiguous = await client.call_tool("echo", {"text": "x"})  # on both servers
        wrong_argument = await client.call_tool("delete_file", {"path": "a", "force": True})
    assert unknown.is_error and text_of(unknown).startswith("Unknown tool 'frobnicate_widgets'")
    assert ambiguous.is_error and "notes__echo" in text_of(ambiguous) and "files__echo" in text_of(ambiguous)
    assert wrong_argument.is_error and "force" in text_of(wrong_argument)
    assert setup.servers["files"].calls == []  # nothing reached a server


async def test_a_mode_tells_its_clients_when_what_it_lists_changes(setup: Setup) -> None:
    proxy = router(setup, "direct")
    changed = anyio.Event()

    async def notes(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(proxy.server, mode="legacy", cache=None, message_handler=notes) as client:
        await client.list_tools()
        await setup.servers["files"].change_tools(tool("move_file", path=STRING))
        await wait_for(lambda: "move_file" in [t.exposed for t in setup.catalogue.tools()], 5)
        assert await proxy.refresh()
        with anyio.fail_after(5):
            await changed.wait()
        assert "move_file" in [t.name for t in (await client.list_tools()).tools]
    assert not await proxy.refresh()  # nothing changed since: nobody is told again
