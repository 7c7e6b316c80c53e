"""The last tier of argument repair: the value's type alone singles out the parameter the call
lacks (`coin` for a price tool's one `symbol`). Each refusal below is for the reason it names."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.commands.resolve import build_resolver
from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.model import Config
from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments


def tool(name: str, properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, "required": list(required)}}


def string(description: str = "") -> dict[str, Any]:
    return {"type": "string", "description": description} if description else {"type": "string"}


PRICE = tool("get_quote", {"symbol": string("Ticker, e.g. BTC")}, "symbol")
TABLE = tool("add_table", {"file": string(), "rows": {"type": "integer"}, "cols": {"type": "integer"}}, "file", "rows")
# (No descriptions here: what a description says is the `described` tier's evidence.)
ALBUM = tool("create_album", {"album": string()}, "album")
TAGGED = tool("tag_photo", {"album": string()}, "album")
FILL = tool("fill_field", {"selector": string(), "value": string("Value to fill")}, "selector", "value")
TWO = tool("find_place", {"address": string(), "country": string()}, "address")
TRIP = tool("plan_trip", {"to_city": string("Where the trip ends.")}, "to_city")
PURGE = tool("purge_cache", {"region": string()}, "region")
SWITCH = tool("set_mode", {"mode": string(), "verbose": {"type": "boolean"}}, "mode")


def check(definition: dict[str, Any], arguments: dict[str, Any]) -> CheckedArguments:
    return ArgumentChecker().check(f"s:{definition['name']}", definition["name"], definition, arguments)


@pytest.mark.parametrize(
    ("definition", "passed", "forwarded"),
    [
        (PRICE, {"coin": "BTC"}, {"symbol": "BTC"}),
        (TABLE, {"file": "a.docx", "rows": 3, "columns": 4}, None),  # `cols` is optional: not typed
        (ALBUM, {"name": "Summer"}, {"album": "Summer"}),  # a form word onto the tool's own thing
        (FILL, {"selector": "#email", "text": "a@b.c"}, {"selector": "#email", "value": "a@b.c"}),  # form onto form
    ],
)
def test_the_one_parameter_a_value_fits_is_what_it_means(
    definition: dict[str, Any], passed: dict[str, Any], forwarded: dict[str, Any] | None
) -> None:
    checked = check(definition, passed)
    if forwarded is None:
        assert checked.refused
    else:
        assert checked.arguments == forwarded, checked.problems
        assert [r.how for r in checked.renames][-1] == "typed"


@pytest.mark.parametrize(
    ("definition", "passed", "why"),
    [
        (TWO, {"location": "Paris"}, "two unfilled parameters take a string"),
        (TAGGED, {"name": "Summer"}, "a bare name of what the tool is not about"),
        (TRIP, {"from_city": "Oslo"}, "the name says another direction"),
        (PURGE, {"area": "eu"}, "the tool destroys"),
        (SWITCH, {"mode": "fast", "debug": True}, "a flag is its name"),
        (PRICE, {"coin": "BTC", "currency": "EUR"}, "two arguments nothing placed"),
        (PRICE, {"coin": 42}, "the type does not agree"),
    ],
)
def test_a_value_that_does_not_single_out_one_parameter_is_refused(
    definition: dict[str, Any], passed: dict[str, Any], why: str
) -> None:
    assert check(definition, passed).refused, why


def test_a_name_another_tool_of_the_server_declares_is_not_read_by_its_type() -> None:
    # `convert` declares `currency`: passed to `get_quote`, it may be meant for that tool
    convert = tool("convert", {"amount": {"type": "number"}, "currency": string()}, "amount", "currency")
    catalogue = Catalogue()
    catalogue.load({"prices": [PRICE, convert]})
    catalogue.configure(["prices"], {})
    resolver = build_resolver(catalogue, Config())
    quote = catalogue.find("prices", "get_quote")
    assert quote is not None
    assert resolver.check_arguments(quote, {"currency": "EUR"}).refused
    assert resolver.check_arguments(quote, {"coin": "BTC"}).arguments == {"symbol": "BTC"}
