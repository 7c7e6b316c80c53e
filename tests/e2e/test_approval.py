"""Asking before a destructive call when no window runs: through `mcpmanager serve --stdio` in both
modes and both protocol eras, a real SDK client is asked by elicitation; accept forwards the call,
decline refuses it, a client without elicitation gets a refusal saying nobody could be asked, a
`deny` policy refuses at once, and an answer that comes after `approvalTimeout` is too late. The
fixture server logs every call it receives, so each test also proves what was NOT sent. The activity
log's record of each decision is read from an engine in this process (nothing outside it shows the
activity), with the same real subprocess server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcpmanager.core.config.load import load_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.clients import serve_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config

TIMEOUT = 1.5  # proxy.approvalTimeout in these configs: seconds
OBJECT = {"type": "object", "properties": {"id": {"type": "integer"}, "password": {"type": "string"}}}
TOOLS = [
    {"name": "delete_item", "description": "Delete an item.", "inputSchema": OBJECT,
     "annotations": {"destructiveHint": True}},
    {"name": "drop_everything", "description": "Drop every item.", "inputSchema": OBJECT},  # by its name
    {"name": "get_item", "description": "Read an item.", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
]  # fmt: skip
DENIED = {"store:drop_everything": {"approval": "deny"}}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    server = fixture("--name", "store", "--tools-file", str(tools), "--log-calls")
    proxy = {"approvalTimeout": TIMEOUT}
    return write_config(tmp_path / "cfg", {"store": server}, supervisor=FAST, tools=DENIED, proxy=proxy)


class Person:
    """The person behind the client: answers each approval form with `action`, after `delay` s."""

    def __init__(self, action: str = "accept", delay: float = 0.0) -> None:
        self.answer(action, delay)

    def answer(self, action: str, delay: float = 0.0) -> None:
        """From now on, answer with `action` after `delay` s, and forget what was asked before."""
        self.action, self.delay = action, delay
        self.asked: list[str] = []

    async def __call__(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        await asyncio.sleep(self.delay)
        return types.ElicitResult(action=self.action, content={} if self.action == "accept" else None)  # type: ignore[arg-type]


async def call(client: Client, mode: str, name: str, arguments: dict[str, Any]) -> str:
    if mode == "discovery":
        result = await client.call_tool("call_tool", {"tool_name": name, "arguments": arguments})
    else:
        result = await client.call_tool(name, arguments)
    return ("ERROR " if result.is_error else "") + text_of(result)


def received(home: Path) -> list[str]:
    log = home / "logs" / "store.log"
    return [line.split(" call ", 1)[1] for line in log.read_text(encoding="utf-8").splitlines() if " call " in line]


async def ready(client: Client, mode: str) -> None:
    async def up() -> bool:
        return not (await call(client, mode, "get_item", {"id": 0})).startswith("ERROR")

    await wait_for(up, 30)


MODES = [("direct", "legacy"), ("direct", "auto"), ("discovery", "legacy"), ("discovery", "auto")]


@pytest.mark.parametrize(("mode", "era"), MODES)
async def test_the_calling_client_is_asked_when_no_window_runs(config: Path, home: Path, mode: str, era: str) -> None:
    # One session for the four answers: each call is asked again (an answer is never remembered);
    # the late answer comes last, as nothing follows the call it was too late for.
    person = Person()
    async with serve_client(config, home, era, mode, elicitation_callback=person) as client:
        await ready(client, mode)
        for action, delay in (("accept", 0.0), ("decline", 0.0), ("cancel", 0.0), ("accept", TIMEOUT + 1.0)):
            person.answer(action, delay)
            got = await call(client, mode, "delete_item", {"id": 7, "password": "hunter2!"})
            assert len(person.asked) == 1, got
            [asked] = person.asked
            assert "'delete_item' on server 'store'" in asked and "(its annotations say it can destroy data)" in asked
            assert '"id": 7' in asked and '"password": "***"' in asked and "hunter2!" not in asked
            if delay:
                assert got.startswith(
                    f"ERROR The call to 'delete_item' on server 'store' was not approved within {TIMEOUT:g} s "
                    "(asked of "
                ), got
            elif action == "accept":
                assert got == '{"id": 7, "password": "hunter2!"}', got
            else:
                assert got.startswith(
                    "ERROR The user refused the call to 'delete_item' on server 'store' (asked of "
                ), got
    # Only the accepted call reached the server (its log masks the password; get_item was never asked).
    assert [c for c in received(home) if not c.startswith("get_item")] == ['delete_item {"id": 7, "password": "***"}']


@pytest.mark.parametrize("mode", ["direct", "discovery"])
async def test_refused_when_nobody_can_be_asked_or_the_policy_denies(config: Path, home: Path, mode: str) -> None:
    async with serve_client(config, home, "legacy", mode) as client:  # no elicitation callback
        await ready(client, mode)
        nobody = await call(client, mode, "delete_item", {"id": 1})
        assert nobody.startswith(
            "ERROR Calling 'delete_item' on server 'store' needs the user's approval (its annotations say it can "
            "destroy data), and nobody could be asked: no mcpmanager window is open and mcp did not declare "
            "elicitation."
        ), nobody
        assert 'set tools."store:delete_item".approval to "allow"' in nobody
    async with serve_client(config, home, "legacy", mode, elicitation_callback=Person("accept")) as client:
        await ready(client, mode)
        if mode == "discovery":  # a model can know before calling
            schema = await client.call_tool("get_tool_schema", {"tool_name": "drop_everything"})
            assert (schema.structured_content or {})["approval"] == "deny"
        denied = await call(client, mode, "drop_everything", {"id": 2})
        assert denied.startswith(
            "ERROR Calling 'drop_everything' on server 'store' is refused: its approval is set to 'deny'"
        ), denied
    assert [c for c in received(home) if not c.startswith("get_item")] == []


async def test_every_decision_is_in_the_activity_log(config: Path, home: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(load_config(config), paths, "direct")
    await engine.start()
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), 30)
        for person in (Person("accept"), Person("decline"), Person("accept", TIMEOUT + 0.5)):
            async with Client(engine.router.server, elicitation_callback=person) as client:
                await client.call_tool("delete_item", {"id": 1})
        async with Client(engine.router.server) as client:
            await client.call_tool("delete_item", {"id": 2})
            await client.call_tool("drop_everything", {"id": 3})
            await client.call_tool("get_item", {"id": 4})
        records = [(r.tool, r.outcome, r.approval) for r in engine.router.activity.records()]
        assert records == [
            ("delete_item", "ok", "allowed by mcp"),
            ("delete_item", "refused", "declined by mcp"),
            ("delete_item", "refused", f"not answered within {TIMEOUT:g} s (client)"),
            ("delete_item", "refused", "refused: nobody to ask"),
            ("drop_everything", "refused", "denied by policy"),
            ("get_item", "ok", None),  # not asked
        ]
        refused = engine.router.activity.records()[1]
        assert refused.detail is not None and refused.detail.startswith("The user refused the call to 'delete_item'")
        assert engine.router.activity.stats["store:delete_item"].calls == 4
    finally:
        await engine.stop()
