"""Name resolution and argument repair through `mcpmanager serve --stdio`, as a client meets them: by
call_tool in discovery mode, and by calling tools directly in both modes. The fixture server logs
every call it receives (`--log-calls`), so each test also proves what was NOT sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.proxy.activity import CallRecord
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers import published as published_servers
from tests.helpers.clients import serve_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.sample_tools import STRING, TOOLS, schema

SQLITE = [  # as mcp-server-sqlite names them
    {"name": "read_query", "description": "Run a SELECT.", "inputSchema": schema({"query": STRING}, "query")},
    {"name": "write_query", "description": "Run an INSERT.", "inputSchema": schema({"query": STRING}, "query")},
]
SETTINGS = {"gh:create_issue": {"aliases": ["open_ticket"], "params": {"project": "repo"}}}

# (name as called, arguments as passed) → exactly what the server must receive.
REPAIRED: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("createIssue", {"owner": "o", "repository": "r", "issue_title": "t"}, {"owner": "o", "repo": "r", "title": "t"}),
    ("gh:create_isue", {"owner": "o", "repo": "r", "title": "typo"}, {"owner": "o", "repo": "r", "title": "typo"}),
    ("open_ticket", {"owner": "o", "project": "r", "title": "alias"}, {"owner": "o", "repo": "r", "title": "alias"}),
    ("mcp__gh__search_code", {"q": "def main", "max_results": 3}, {"query": "def main", "limit": 3}),
    ("fetch_issue", {"owner": "o", "repo": "r", "issueNumber": 7}, {"owner": "o", "repo": "r", "issue_number": 7}),
    ("DeleteIssue", {"owner": "o", "repo": "r", "issue_number": 1}, {"owner": "o", "repo": "r", "issue_number": 1}),
    # Ambiguous by name (by coordinates or by city), settled by the arguments only one tool takes.
    ("get_current_weather", {"city": "Oslo"}, {"city": "Oslo"}),
]
# (name as called, arguments) → the start of the error a model reads; nothing reaches the server.
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("remove_issue", {"owner": "o", "repo": "r", "issue_number": 2}, "Unknown tool 'remove_issue'. The closest is"),
    ("delete_isue", {"owner": "o", "repo": "r", "issue_number": 3}, "Unknown tool 'delete_isue'. The closest is"),
    ("sqlite_query", {"query": "select 1"}, "Ambiguous tool name 'sqlite_query': it may be read_query [sqlite] or"),
    ("echo", {"text": "x"}, "Ambiguous tool name 'echo': it may be gh__echo [gh] or other__echo [other] or"),
    ("edit_file", {"path": "/a", "content": "x", "append": True}, "Not called: the arguments for 'edit_file'"),
    ("get_issue", {"owner": "o", "repo": "r", "issue_number": "4"}, "Not called: the arguments for 'get_issue'"),
    ("send_email", {"to": "a@b.c"}, "Unknown tool 'send_email'."),
    ("get_current_weather", {"town": "Oslo"}, "Ambiguous tool name 'get_current_weather': it may be get_weather [gh]"),
]


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    tools, sqlite = tmp_path / "tools.json", tmp_path / "sqlite.json"
    tools.write_text(json.dumps(TOOLS))
    sqlite.write_text(json.dumps(SQLITE))
    servers = {
        "gh": fixture("--name", "gh", "--tools-file", str(tools), "--log-calls"),
        "other": fixture("--name", "other", "--log-calls"),
        "sqlite": fixture("--name", "sqlite", "--tools-file", str(sqlite), "--log-calls"),
    }
    # About resolution, not asking: DeleteIssue is forwarded unasked (tests/e2e/test_approval.py asks).
    return write_config(tmp_path, servers, supervisor=FAST, tools=SETTINGS, proxy={"askBefore": "never"})


def received(home: Path, server: str) -> list[tuple[str, dict[str, Any]]]:
    log = home / "logs" / f"{server}.log"
    calls = []
    for stamped in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        line = stamped.partition(" ")[2]  # after the log's timestamp
        if line.startswith("call "):
            name, _, arguments = line[5:].partition(" ")
            if name != "whoami":  # `ready` asks each server that
                calls.append((name, json.loads(arguments)))
    return calls


async def call(client: Client, via: str, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    if via == "call_tool":
        return await client.call_tool("call_tool", {"tool_name": name, "arguments": arguments})
    return await client.call_tool(name, arguments)


async def ready(client: Client, via: str) -> None:
    """Until every server is up: a call naming one server waits for that server alone."""
    for server in ("gh", "other", "sqlite"):

        async def answered(server: str = server) -> bool:
            result = await call(client, via, f"{server}__whoami", {})
            return not result.is_error

        await wait_for(answered, timeout=30)


@pytest.mark.parametrize(
    ("mode", "via", "era"),
    [("discovery", "call_tool", "auto"), ("discovery", "direct", "legacy"), ("direct", "direct", "auto")],
)
async def test_wrong_names_and_arguments_through_serve(setup: Path, home: Path, mode: str, via: str, era: str) -> None:
    async with serve_client(setup, home, era, mode=mode) as client:
        await ready(client, via)
        for name, arguments, forwarded in REPAIRED:
            result = await call(client, via, name, arguments)
            assert not result.is_error, f"{name}: {text_of(result)}"
            assert json.loads(text_of(result)) == forwarded, name
        for name, arguments, start in REFUSED:
            result = await call(client, via, name, arguments)
            assert result.is_error, f"{name} was not refused: {text_of(result)}"
            assert text_of(result).startswith(start), text_of(result)
        refusal = text_of(await call(client, via, "edit_file", {"path": "/a", "content": "x", "append": True}))
        assert "- 'append' is not a parameter of edit_file" in refusal
        assert "Parameters: path (string, required), content (string, required)" in refusal
        template = '{"tool_name": "edit_file", "arguments": {"path": "<path>", "content": "<content>"}}'
        assert refusal.endswith(template if via == "call_tool" else '{"path": "<path>", "content": "<content>"}')
        assert "'issue_number': '4' is not of type 'integer'" in text_of(
            await call(client, via, "get_issue", {"owner": "o", "repo": "r", "issue_number": "4"})
        )
    # Exactly the repaired calls reached the server, nothing refused did.
    assert [c for c in received(home, "gh") if c[0] != "echo"] == [
        ("create_issue", REPAIRED[0][2]),
        ("create_issue", REPAIRED[1][2]),
        ("create_issue", REPAIRED[2][2]),
        ("search_code", REPAIRED[3][2]),
        ("get_issue", REPAIRED[4][2]),
        ("delete_issue", REPAIRED[5][2]),
        ("get_weather_by_city", REPAIRED[6][2]),
    ]
    assert received(home, "other") == [] and received(home, "sqlite") == []


async def test_the_activity_log_records_how_each_call_was_resolved(setup: Path, home: Path) -> None:
    """The engine in-process, a real SDK client connected in memory, real subprocess servers."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(parse_config(setup.read_text(), str(setup)), paths, "discovery")
    calls: list[CallRecord] = []
    engine.events.connect(lambda event: calls.append(event) if isinstance(event, CallRecord) else None)
    await engine.start()
    try:
        await wait_for(lambda: all(d.status.state is State.READY for d in engine.downstreams.values()), timeout=30)
        async with Client(engine.router.server) as client:
            arguments = {"owner": "o", "repository": "r", "issue_title": "t"}
            await client.call_tool("call_tool", {"tool_name": "createIssue", "arguments": arguments})
            await client.call_tool("remove_issue", {"owner": "o", "repo": "r", "issue_number": 1})
            await client.call_tool("call_tool", {"tool_name": "edit_file", "arguments": {"path": "/a"}})
            await client.call_tool("get_issue", {"owner": "o", "repo": "r", "issue_number": 9})
            await client.call_tool("get_current_weather", {"latitude": 60, "longitude": 11})
        records = engine.router.activity.records()
        summary = [(r.called, r.via, r.exposed, r.how, r.renames, r.outcome) for r in records]
        renamed = (("repository", "repo"), ("issue_title", "title"))
        assert summary == [
            ("createIssue", "call_tool", "create_issue", "normalized", renamed, "ok"),
            ("remove_issue", "direct", None, None, (), "unknown"),
            ("edit_file", "call_tool", "edit_file", "exact", (), "refused"),
            ("get_issue", "direct", "get_issue", "exact", (), "ok"),
            ("get_current_weather", "direct", "get_weather", "arguments", (), "ok"),
        ]
        assert records[1].detail is not None and records[1].detail.startswith("Unknown tool 'remove_issue'.")
        assert records[2].detail == (
            "Not called: the arguments for 'edit_file' need fixing (nothing was sent to the server)."
        )
        assert all(r.duration is not None and r.duration >= 0 for r in records)
        assert records[0].resolved and not records[3].resolved
        assert engine.router.activity.stats["gh:create_issue"].calls == 1
        # Observers (the GUI) see each call begin, resolve and end.
        assert [(c.called, c.outcome, c.exposed) for c in calls if c.id == records[0].id] == [
            ("createIssue", "pending", None),
            ("createIssue", "pending", "create_issue"),
            ("createIssue", "ok", "create_issue"),
        ]
    finally:
        await engine.stop()


# Real published servers (installed by scripts/install-published-servers.sh) -----------------------


@pytest.mark.published
@pytest.mark.timeout(180, func_only=True)
@pytest.mark.parametrize(("mode", "via", "era"), [("discovery", "call_tool", "auto"), ("direct", "direct", "legacy")])
async def test_wrong_names_reach_real_servers(
    published: published_servers.Config, tmp_path: Path, home: Path, mode: str, via: str, era: str
) -> None:
    config = published_servers.make_config(published, tmp_path / "config", only=["filesystem", "git", "time", "memory"])
    hello = published_servers.sandbox(published) / "files" / "hello.txt"
    repo = published_servers.git_repo(published)
    async with serve_client(config, home, era, mode=mode) as client:
        await published_servers.wait_status(
            home,
            lambda s: all(v["state"] == "ready" for v in s.values()),
            published_servers.CATALOGUE_TIMEOUT,
            "ready",
        )
        # Spellings, prefixes, typos and argument names a model produces, answered by the real servers.
        text = text_of(await call(client, via, "readTextFile", {"file_path": str(hello)}))
        assert text.strip() == "Hello from the mcpmanager sandbox.", text
        status = text_of(await call(client, via, "git.gitStatus", {"repo": str(repo)}))
        assert "notes.txt" in status, status  # its unstaged change
        now = await call(client, via, "get_curent_time", {"tz": "Asia/Tokyo"})
        assert not now.is_error and (now.structured_content or {}).get("timezone") == "Asia/Tokyo", text_of(now)
        graph = await call(client, via, "mcp__memory__readGraph", {})
        assert not graph.is_error, text_of(graph)
        # A guess onto a destructive tool, a name on two... and a call that would lose an argument.
        withheld = await call(client, via, "remove_entities", {"entityNames": ["x"]})
        assert withheld.is_error and "The closest is delete_entities, but it can destroy data" in text_of(withheld)
        refused = await call(client, via, "read_text_file", {"path": str(hello), "lines": 1})
        assert refused.is_error and "'lines' is not a parameter of read_text_file" in text_of(refused)
        wrong_type = await call(client, via, "read_text_file", {"path": str(hello), "head": "1"})
        assert wrong_type.is_error and "'head': '1' is not of type 'number'" in text_of(wrong_type)
