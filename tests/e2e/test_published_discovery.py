"""`mcpmanager serve --stdio --mode discovery` in front of the real, published MCP servers of
test_published (installed by scripts/install-published-servers.sh into .cache/published/), driven by the
real SDK client in both protocol eras: the four meta-tools, ranked search for plain-language needs,
routing by every name form, "did you mean" for typos, schemas and regex search, and always-on toggled
in the running config file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.helpers.clients import Notes, serve_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.published import (
    CALL_TIMEOUT,
    CATALOGUE_TIMEOUT,
    ERAS,
    GOOD,
    Config,
    Servers,
    cached_tools,
    catalogue_complete,
    make_config,
    sandbox,
    status,
    wait_status,
)

pytestmark = [pytest.mark.published, pytest.mark.timeout(180, func_only=True)]

META = ["discover_tools", "search_tools_regex", "get_tool_schema", "call_tool"]
TOKEN_BUDGET = 1000

# Plain-language needs → (server, exposed name) of the one tool a human reading the list would pick.
NEEDS = {
    "what time is it in Tokyo": ("time", "get_current_time"),
    "add observations to an entity in the knowledge graph": ("memory", "add_observations"),
    "show the unstaged changes in my repository": ("git", "git_diff_unstaged"),
    "read the contents of a text file": ("filesystem", "read_text_file"),
    "compute the sum of two numbers": ("everything", "get-sum"),
    "search GitHub repositories": ("github", "search_repositories"),
    "list the open pull requests of a GitHub repository": ("github", "list_pull_requests"),
    "run a shell command in a terminal": ("desktop-commander", "start_process"),
}
TOP = 3  # the rank every need must reach (1 is the goal; the printed ranks say how far we are)


def tokens(tools: list[types.Tool]) -> int:
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return len(json.dumps(dumped).encode()) // 4


async def listed_tools(client: Client) -> list[types.Tool]:
    with anyio.fail_after(CALL_TIMEOUT):
        return list((await client.list_tools()).tools)


async def names(client: Client) -> list[str]:
    return [t.name for t in await listed_tools(client)]


async def meta_call(client: Client, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """A meta-tool call; the result whatever it is (callers check is_error)."""
    with anyio.fail_after(CALL_TIMEOUT):
        return await client.call_tool(tool, arguments)


async def ok(client: Client, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await meta_call(client, tool, arguments)
    assert not result.is_error, f"{tool}({arguments}) failed: {text_of(result)}"
    return result


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), text_of(result)  # the SDK types it Any
    return result.structured_content


# 1-5. The meta-tools over the whole published catalogue --------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_discovery_mode_over_the_published_servers(
    published: Config,
    tmp_path: Path,
    home: Path,
    era: str,
) -> None:
    config = make_config(published, tmp_path / "config")
    files = sandbox(published) / "files"
    async with serve_client(config, home, era, mode="discovery") as client:
        # 1. Only the four meta-tools, small enough to sit in every context.
        tools = await listed_tools(client)
        assert [t.name for t in tools] == META
        size = tokens(tools)
        print(f"\n[{era}] discovery tools/list: {len(tools)} tools, ~{size} tokens (UTF-8 bytes / 4)")
        assert size < TOKEN_BUDGET

        await wait_status(home, catalogue_complete, CATALOGUE_TIMEOUT, "every server settled")
        own = await cached_tools(home, GOOD)
        assert sum(len(own[name]) for name in GOOD) > 90  # the real catalogue is behind the four
        assert await names(client) == META  # ... and still only they are listed

        # 2. Plain-language needs find the right real tool near the top.
        ranks: dict[str, int | None] = {}
        for need, (server, tool) in NEEDS.items():
            found = structured(await ok(client, "discover_tools", {"query": need, "limit": 10}))
            hits = [(hit["server"], hit["name"]) for hit in found["tools"]]
            ranks[need] = hits.index((server, tool)) + 1 if (server, tool) in hits else None
            print(f"[{era}] rank {ranks[need]} for {need!r} -> {server}:{tool}; top 3: {hits[:3]}")
        missed = {need: rank for need, rank in ranks.items() if rank is None or rank > TOP}
        assert not missed, f"not in the top {TOP}: {missed}"

        # A hit carries a ready call_tool template, placeholders for the required arguments.
        time_hits = structured(await ok(client, "discover_tools", {"query": "current time in a timezone"}))
        [entry] = [hit for hit in time_hits["tools"] if hit["name"] == "get_current_time"]
        assert entry["call"] == {"tool_name": "get_current_time", "arguments": {"timezone": "<timezone>"}}

        # 3. call_tool by exposed name, by server:tool, clashing names through the server form.
        tokyo = structured(
            await ok(client, "call_tool", {"tool_name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}})
        )
        assert tokyo["timezone"] == "Asia/Tokyo" and str(tokyo["datetime"]).endswith("+09:00"), tokyo
        utc = structured(
            await ok(client, "call_tool", {"tool_name": "time:get_current_time", "arguments": {"timezone": "UTC"}})
        )
        assert utc["timezone"] == "UTC" and str(utc["datetime"]).endswith("+00:00"), utc

        path = {"path": str(files)}
        listing = text_of(await ok(client, "call_tool", {"tool_name": "filesystem:list_directory", "arguments": path}))
        assert "[FILE] hello.txt" in listing, listing
        commander = await ok(client, "call_tool", {"tool_name": "desktop-commander:list_directory", "arguments": path})
        assert "hello.txt" in text_of(commander), text_of(commander)
        # Which server answered: only filesystem is confined to the sandbox.
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "elsewhere.txt").write_text("x", encoding="utf-8")
        away = {"path": str(outside)}
        refused = await meta_call(client, "call_tool", {"tool_name": "filesystem:list_directory", "arguments": away})
        assert refused.is_error and "elsewhere.txt" not in text_of(refused), text_of(refused)
        print(f"[{era}] filesystem:list_directory outside its sandbox -> {text_of(refused)!r}")
        there = await ok(client, "call_tool", {"tool_name": "desktop-commander:list_directory", "arguments": away})
        assert "[FILE] elsewhere.txt" in text_of(there), text_of(there)
        exposed = await ok(client, "call_tool", {"tool_name": "filesystem__list_directory", "arguments": path})
        assert text_of(exposed) == listing
        # The bare clashing name is ambiguous: refused, with both server forms offered.
        bare = await meta_call(client, "call_tool", {"tool_name": "list_directory", "arguments": path})
        assert bare.is_error, text_of(bare)
        assert "filesystem__list_directory" in text_of(bare), text_of(bare)
        assert "desktop-commander__list_directory" in text_of(bare), text_of(bare)

        # The argument names models commonly produce.
        variant = structured(
            await ok(client, "call_tool", {"toolName": "get_current_time", "args": {"timezone": "Asia/Tokyo"}})
        )
        assert variant["timezone"] == "Asia/Tokyo", variant
        stringified = structured(
            await ok(client, "call_tool", {"tool_name": "get_current_time", "arguments": '{"timezone": "UTC"}'})
        )
        assert stringified["timezone"] == "UTC", stringified
        echo = await ok(client, "call_tool", {"toolName": "everything/echo", "args": {"message": f"hi {era}"}})
        assert text_of(echo) == f"Echo: hi {era}"

        # 4. A clear misspelling is resolved; an unknown name gets an error naming discover_tools, and a
        # name two servers share gets both candidates.
        typo = structured(
            await ok(client, "call_tool", {"tool_name": "get_curent_time", "arguments": {"timezone": "UTC"}})
        )
        assert typo["timezone"] == "UTC", typo
        unknown = await meta_call(client, "call_tool", {"tool_name": "send_email", "arguments": {}})
        assert unknown.is_error and text_of(unknown).startswith("Unknown tool 'send_email'."), text_of(unknown)
        assert 'discover_tools("send email")' in text_of(unknown), text_of(unknown)
        print(f"[{era}] send_email -> {text_of(unknown)}")
        short = await meta_call(client, "call_tool", {"tool_name": "read_fil", "arguments": path})
        assert short.is_error, text_of(short)
        text = text_of(short)
        assert "discover_tools" in text, text
        assert "filesystem__read_file" in text and "desktop-commander__read_file" in text, text
        print(f"[{era}] read_fil -> {text}")

        # 5. A real tool's schema; regex search over names.
        schema = structured(await ok(client, "get_tool_schema", {"tool_name": "git_status"}))
        assert schema["name"] == "git_status" and schema["server"] == "git", schema
        assert "repo_path" in schema["inputSchema"]["properties"], schema
        assert "repo_path" in schema["inputSchema"].get("required", []), schema
        assert schema["call"]["tool_name"] == "git_status", schema

        git_tools = sorted(own["git"])
        assert len(git_tools) > 10  # more than the default limit
        first = await ok(client, "search_tools_regex", {"pattern": "^git_"})
        assert structured(first)["total"] == len(git_tools), text_of(first)
        assert [t["name"] for t in structured(first)["tools"]] == git_tools[:10]
        assert f"{len(git_tools)} tools match /^git_/ (first 10)" in text_of(first), text_of(first)
        every = structured(await ok(client, "search_tools_regex", {"pattern": "^git_", "limit": 50}))
        assert [t["name"] for t in every["tools"]] == git_tools
        assert {t["server"] for t in every["tools"]} == {"git"}

        # Nothing above disturbed any server, and the list never grew.
        after = await anyio.to_thread.run_sync(status, home)
        assert catalogue_complete(after), after
        assert all(after[name]["restarts"] == 0 for name in GOOD), after
        assert await names(client) == META


# 6. Always-on toggled in the running config --------------------------------------------------------


def set_tools(config: Path, tools: dict[str, Any]) -> None:
    document = json.loads(config.read_text(encoding="utf-8"))
    document["tools"] = tools
    config.write_text(json.dumps(document, indent=1), encoding="utf-8")


def pids(servers: Servers) -> dict[str, Any]:
    return {name: servers[name]["pid"] for name in GOOD}


async def changed(client: Client, era: str, notes: Notes, config: Path, tools: dict[str, Any]) -> None:
    """Write `tools` into the running config; return once the client has been told the list changed."""
    if era == "legacy":
        before = notes.count
        set_tools(config, tools)
        await wait_for(lambda: notes.count > before, timeout=15)
    else:
        async with client.listen(tools_list_changed=True) as subscription:
            set_tools(config, tools)
            with anyio.fail_after(15):
                async for _ in subscription:
                    break


@pytest.mark.parametrize("era", ERAS)
async def test_always_on_toggled_in_the_running_config_reaches_connected_clients(
    published: Config,
    tmp_path: Path,
    home: Path,
    era: str,
) -> None:
    config = make_config(published, tmp_path / "config")
    notes = Notes()
    async with serve_client(config, home, era, mode="discovery", notes=notes) as client:
        assert await names(client) == META
        before = await wait_status(home, catalogue_complete, CATALOGUE_TIMEOUT, "every server settled")
        # Servers coming up change nothing a discovery-mode client sees: no notification for it.
        assert notes.count == 0

        await changed(client, era, notes, config, {"time:get_current_time": {"alwaysOn": True}})
        tools = await listed_tools(client)
        assert [t.name for t in tools] == [*META, "get_current_time"]
        assert tools[-1].input_schema["required"] == ["timezone"]
        now = await ok(client, "get_current_time", {"timezone": "Asia/Tokyo"})
        assert structured(now)["timezone"] == "Asia/Tokyo"

        await changed(client, era, notes, config, {})
        assert await names(client) == META
        # Not listed any more, it is still callable through call_tool.
        again = await ok(client, "call_tool", {"tool_name": "get_current_time", "arguments": {"timezone": "UTC"}})
        assert structured(again)["timezone"] == "UTC"

        # Without restarting anything: the same processes serve, no restarts.
        after = await anyio.to_thread.run_sync(status, home)
        assert catalogue_complete(after), after
        assert pids(after) == pids(before)
        assert all(after[name]["restarts"] == 0 for name in GOOD), after
    if era == "legacy":
        assert notes.count == 2
