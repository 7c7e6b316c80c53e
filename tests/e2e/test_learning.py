"""Learning from use through `mcpmanager serve --stdio` with the SDK's client: a tool the client
found with discover_tools and then called ranks higher for the same kind of query, also after the
engine restarts; the pairs are in the cache folder, and `status --json` names no suggestion before
a tool is used often."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.clients import serve_client
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config

TOOLS = [
    {
        "name": "refund_payment",
        "description": "Return money to the customer for a charge.",
        "inputSchema": {"type": "object", "properties": {"charge_id": {"type": "string"}}, "required": ["charge_id"]},
    },
    {
        "name": "list_orders",
        "description": "List the orders of a buyer, newest first.",
        "inputSchema": {"type": "object", "properties": {"buyer": {"type": "string"}}},
    },
    {
        "name": "get_order",
        "description": "Get one order of a buyer by its number.",
        "inputSchema": {"type": "object", "properties": {"number": {"type": "string"}}},
    },
    {
        "name": "ship_order",
        "description": "Mark an order as shipped to the buyer.",
        "inputSchema": {"type": "object", "properties": {"number": {"type": "string"}}},
    },
]


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    extra = tmp_path / "tools.json"
    extra.write_text(json.dumps(TOOLS))
    return write_config(tmp_path, {"shop": fixture("--name", "shop", "--tools-file", str(extra))}, supervisor=FAST)


async def _names(client: Any, query: str) -> list[str]:
    found = await client.call_tool("discover_tools", {"query": query, "limit": 4})
    assert not found.is_error
    return [t["name"] for t in found.structured_content["tools"]]


async def test_a_tool_found_and_called_ranks_higher_for_the_same_kind_of_query(setup: Path, home: Path) -> None:
    later = "give the buyer the money back for order 12"
    async with serve_client(setup, home, "legacy", mode="discovery") as client:

        async def listed() -> bool:
            return "refund_payment" in await _names(client, "money for a charge")

        await wait_for(listed, timeout=30)
        before = await _names(client, later)
        assert before[0] != "refund_payment"  # the search alone puts the orders first

        for query in ("give a buyer their money back", "the buyer wants the money back for an order"):
            shown = await _names(client, query)
            assert "refund_payment" in shown
            called = await client.call_tool(
                "call_tool", {"tool_name": "refund_payment", "arguments": {"charge_id": "ch_1"}}
            )
            assert not called.is_error

        after = await _names(client, later)
        assert after[0] == "refund_payment"
        assert (await _names(client, "list the orders of this buyer"))[0] == "list_orders"  # unrelated: unchanged

    learned = json.loads((home / "cache" / "learned.json").read_text(encoding="utf-8"))
    assert {(e["query"], e["tool"], e["count"]) for e in learned["learned"]} == {
        ("give a buyer their money back", "shop:refund_payment", 1),
        ("the buyer wants the money back for an order", "shop:refund_payment", 1),
    }
    assert not any("charge_id" in json.dumps(e) or "ch_1" in json.dumps(e) for e in learned["learned"])

    async with serve_client(setup, home, "legacy", mode="discovery") as client:  # a new engine

        async def lifted() -> bool:
            return (await _names(client, later))[0] == "refund_payment"

        await wait_for(lifted, timeout=30)


async def test_a_call_without_a_query_before_it_teaches_nothing(setup: Path, home: Path) -> None:
    async with serve_client(setup, home, "legacy", mode="discovery") as client:

        async def listed() -> bool:
            found = await client.call_tool("search_tools_regex", {"pattern": "refund"})
            return bool(found.structured_content and found.structured_content["tools"])

        await wait_for(listed, timeout=30)
        for _ in range(3):
            called = await client.call_tool(
                "call_tool", {"tool_name": "refund_payment", "arguments": {"charge_id": "c"}}
            )
            assert not called.is_error
    assert not (home / "cache" / "learned.json").exists()
