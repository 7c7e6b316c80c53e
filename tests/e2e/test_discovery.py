"""Discovery mode through `mcpmanager serve --stdio`: meta-tools, search, templates, routing,
always-on toggled in the config file while clients are connected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.clients import Notes, serve_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config

TOOLS = [
    {
        "name": "create_issue",
        "description": "Create a new issue in a GitHub repository.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "title": {"type": "string"},
                "body": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["owner", "repo", "title"],
        },
    },
    {
        "name": "list_pull_requests",
        "description": "List pull requests of a repository, filtered by state.",
        "inputSchema": {
            "type": "object",
            "properties": {"repo": {"type": "string"}, "state": {"type": "string", "enum": ["open", "closed"]}},
            "required": ["repo"],
        },
    },
    {
        "name": "book_meeting",
        "description": "Book a meeting room in the calendar for a given day.",
        "inputSchema": {
            "type": "object",
            "properties": {"day": {"type": "string", "format": "date"}, "room": {"type": "string"}},
            "required": ["day"],
        },
    },
]


def tokens(tools: Any) -> int:
    return len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]).encode()) // 4


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    extra = tmp_path / "tools.json"
    extra.write_text(json.dumps(TOOLS))
    return write_config(
        tmp_path,
        {"gh": fixture("--name", "gh", "--tools-file", str(extra)), "other": fixture("--name", "other")},
        supervisor=FAST,
    )


async def wait_catalogue(client: Any, needle: str) -> None:
    async def found() -> bool:
        result = await client.call_tool("search_tools_regex", {"pattern": needle})
        return any(t["name"] == needle for t in (result.structured_content or {}).get("tools", []))

    await wait_for(found, timeout=30)


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_meta_tools_find_and_call(setup: Path, home: Path, era: str) -> None:
    async with serve_client(setup, home, era, mode="discovery") as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == ["discover_tools", "search_tools_regex", "get_tool_schema", "call_tool"]
        assert tokens(listed) < 1000
        await wait_catalogue(client, "create_issue")

        found = await client.call_tool("discover_tools", {"query": "open a new issue on a github repository"})
        assert not found.is_error
        hits = found.structured_content["tools"]
        assert hits[0]["name"] == "create_issue"
        assert hits[0]["call"] == {
            "tool_name": "create_issue",
            "arguments": {"owner": "<owner>", "repo": "<repo>", "title": "<title>"},
        }
        assert hits[0]["optional"] == ["body", "labels"]
        assert len(text_of(found).encode()) // 4 < 120 * len(hits) + 40

        meeting = await client.call_tool("discover_tools", {"q": "reserve a room for a meeting", "limit": 2})
        assert meeting.structured_content["tools"][0]["call"]["arguments"] == {"day": "<YYYY-MM-DD>"}

        nothing = await client.call_tool("discover_tools", {"query": "zxqv wplk"})
        assert not nothing.is_error and "No tool matches" in text_of(nothing)

        # call_tool by exposed name, by the server form, and for a clashing name through the server form
        echoed = await client.call_tool("call_tool", {"tool_name": "gh__echo", "arguments": {"text": "a"}})
        assert text_of(echoed) == "a"
        by_server = await client.call_tool("call_tool", {"toolName": "other:echo", "args": {"text": "b"}})
        assert text_of(by_server) == "b"
        assert "other" in text_of(await client.call_tool("call_tool", {"tool_name": "other/whoami"}))
        created = await client.call_tool(
            "call_tool", {"tool_name": "gh:create_issue", "arguments": {"owner": "o", "repo": "r", "title": "t"}}
        )
        assert json.loads(text_of(created)) == {"owner": "o", "repo": "r", "title": "t"}

        # A misspelt name and wrong argument names are repaired; a name that means another action is not
        repaired = await client.call_tool(
            "call_tool",
            {"tool_name": "create_isue", "arguments": {"owner": "o", "repository": "r", "issue_title": "t"}},
        )
        assert json.loads(text_of(repaired)) == {"owner": "o", "repo": "r", "title": "t"}
        unknown = await client.call_tool("call_tool", {"tool_name": "delete_issue", "arguments": {}})
        assert unknown.is_error
        text = text_of(unknown)
        assert text.startswith("Unknown tool 'delete_issue'.") and "create_issue" in text
        assert 'discover_tools("delete issue")' in text
        ambiguous = await client.call_tool("call_tool", {"tool_name": "echo", "arguments": {"text": "c"}})
        assert ambiguous.is_error and "Ambiguous tool name 'echo'" in text_of(ambiguous)
        assert "gh__echo [gh]" in text_of(ambiguous) and "other__echo [other]" in text_of(ambiguous)

        schema = await client.call_tool("get_tool_schema", {"tool_name": "book_meeting"})
        assert schema.structured_content["inputSchema"]["required"] == ["day"]
        regex = await client.call_tool("search_tools_regex", {"pattern": "pull_req"})
        assert "list_pull_requests" in text_of(regex)
        bad = await client.call_tool("search_tools_regex", {"pattern": "("})
        assert bad.is_error and "Invalid regular expression" in text_of(bad)


async def test_toggling_always_on_in_the_config_notifies_clients(setup: Path, home: Path) -> None:
    notes = Notes()
    async with serve_client(setup, home, "legacy", mode="discovery", notes=notes) as client:
        await wait_catalogue(client, "book_meeting")
        before = notes.count
        document = json.loads(setup.read_text())
        document["tools"] = {"gh:book_meeting": {"alwaysOn": True}}
        setup.write_text(json.dumps(document))
        await wait_for(lambda: notes.count > before, timeout=15)
        names = [t.name for t in (await client.list_tools()).tools]
        assert names[-1] == "book_meeting" and len(names) == 5
        result = await client.call_tool("book_meeting", {"day": "2026-12-01"})
        assert json.loads(text_of(result)) == {"day": "2026-12-01"}

        # A broken edit is ignored (reported in the engine's log); the running setup stays.
        setup.write_text("{broken")
        document["tools"] = {}
        await wait_for(lambda: "config change ignored" in (home / "serve-stderr.log").read_text(), timeout=15)
        assert len((await client.list_tools()).tools) == 5
