"""Learning through the router, with the SDK's client on memory streams: which calls teach (after
a discover_tools that showed the tool, or after a "did you mean" that named it), and that the
lift reaches discover_tools' answer."""

from __future__ import annotations

from mcp import Client

from tests.core.proxy.test_router import Setup, router, setup  # noqa: F401  (the fixture)


async def test_a_call_after_a_query_that_showed_it_is_learned(setup: Setup) -> None:  # noqa: F811
    proxy = router(setup, "discovery")
    async with Client(proxy.server, mode="legacy", cache=None) as client:
        await client.call_tool("call_tool", {"tool_name": "add_note", "arguments": {"body": "a"}})  # no query
        found = await client.call_tool("discover_tools", {"query": "write something down in the notebook"})
        assert "add_note" in [t["name"] for t in (found.structured_content or {})["tools"]]
        await client.call_tool("call_tool", {"tool_name": "add_note", "arguments": {"body": "b"}})
        await client.call_tool("call_tool", {"tool_name": "add_note", "arguments": {"body": "c"}})  # again: once
        await client.call_tool("call_tool", {"tool_name": "add_note", "arguments": {"wrong": "d"}})  # refused
    pairs = [(e.query, e.tool, e.count) for e in proxy.learning.store.entries()]
    assert pairs == [("write something down in the notebook", "notes:add_note", 1)]


async def test_a_name_from_a_did_you_mean_then_called_is_learned(setup: Setup) -> None:  # noqa: F811
    proxy = router(setup, "discovery")
    async with Client(proxy.server, mode="legacy", cache=None) as client:
        found = await client.call_tool("discover_tools", {"query": "add a note to my notebook"})
        assert "files__echo" not in [t["name"] for t in (found.structured_content or {})["tools"]]
        ambiguous = await client.call_tool("call_tool", {"tool_name": "echo", "arguments": {"text": "x"}})
        assert ambiguous.is_error  # on both servers: "did you mean notes__echo, files__echo"
        called = await client.call_tool("call_tool", {"tool_name": "files__echo", "arguments": {"text": "x"}})
        assert not called.is_error
    pairs = [(e.query, e.tool) for e in proxy.learning.store.entries()]
    assert pairs == [("add a note to my notebook", "files:echo")]


async def test_what_was_learned_lifts_the_tool_in_discover_tools(setup: Setup) -> None:  # noqa: F811
    proxy = router(setup, "discovery")
    query = "say the text back"  # both servers' echo fit it alike: the search puts files__echo first
    async with Client(proxy.server, mode="legacy", cache=None) as client:
        found = await client.call_tool("discover_tools", {"query": query, "limit": 25})
        assert [t["name"] for t in (found.structured_content or {})["tools"]][:2] == ["files__echo", "notes__echo"]
        await client.call_tool("call_tool", {"tool_name": "notes__echo", "arguments": {"text": "x"}})  # the second
        lifted = await client.call_tool("discover_tools", {"query": query})
    assert [t["name"] for t in (lifted.structured_content or {})["tools"]][:2] == ["notes__echo", "files__echo"]
