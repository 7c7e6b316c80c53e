"""The limits on renames read from descriptions (issue 17's safety pass), each seen on a simulation
over real catalogues (`bench_resolve --simulate`): every parameter name of a server's other tools
passed to each of its tools. The tools and wordings here are this file's own."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments


def spec(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"inputSchema": {"type": "object", "properties": properties, "required": list(required)}}


def text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def check(name: str, definition: dict[str, Any], arguments: dict[str, Any]) -> CheckedArguments:
    return ArgumentChecker().check(f"s:{name}", name, definition, arguments)


GIGS = spec({"query": text("Words to look for."), "venue": text("The location of the gig.")}, "query")
PARTY = spec({"title": text("What the party is called."), "venue": text("The location of the party.")}, "title")
LODGING = spec({"location": text("The city or town where a room is sought.")}, "location")
COACH = spec({"origin": text("The city the coach leaves."), "to_city": text("The destination city.")}, "to_city")
SAFE = spec({"safe": text("The name of the Key Safe.")}, "safe")
FLATS = spec({"rooms": {"type": "integer", "description": "The number of bedrooms wanted"}}, "rooms")


def test_a_call_that_would_run_without_the_argument_is_not_changed_by_a_description() -> None:
    # every required parameter is there: `location` renamed onto the optional venue would change
    # what a call that runs as it is does
    assert check("search_gigs", GIGS, {"query": "jazz", "location": "Hall A"}).refused


def test_a_call_that_lacks_a_required_parameter_may_be_repaired_from_a_description() -> None:
    checked = check("search_gigs", GIGS, {"Query": "jazz", "location": "Hall A"})
    assert checked.arguments == {"query": "jazz", "venue": "Hall A"}, checked.problems


def test_an_optional_parameter_is_taken_from_a_description_only_by_a_tool_that_reads() -> None:
    # the call lacks `title` as passed (`Title` is its spelling), so descriptions are read; but a
    # party planned at a venue nobody named is another party than the one asked for
    checked = check("plan_party", PARTY, {"Title": "Leaving do", "location": "Hall A"})
    assert checked.refused, checked.arguments


@pytest.mark.parametrize("passed", ["from_city", "to_city", "origin_city"])
def test_a_name_that_says_a_direction_fits_only_a_parameter_that_says_it(passed: str) -> None:
    # search terms drop `from` and `to`: `from_city` would otherwise read as any city
    assert check("find_lodging", LODGING, {passed: "Oslo"}).refused


def test_a_direction_the_parameter_says_is_kept() -> None:
    assert check("find_lodging", LODGING, {"city": "Oslo"}).arguments == {"location": "Oslo"}
    checked = check("find_coach", COACH, {"origin": "Oslo", "destination": "Bergen"})
    assert checked.arguments == {"origin": "Oslo", "to_city": "Bergen"}, checked.problems


def test_a_word_that_qualifies_what_a_description_names_is_not_that_thing() -> None:
    # "the name of the Key Safe": a key is not the safe it qualifies
    assert check("list_safe_items", SAFE, {"key": "k1"}).refused


def test_the_thing_a_description_names_is_found_past_a_trailing_participle() -> None:
    # "the number of bedrooms wanted": bedrooms, not `wanted`
    assert check("find_flats", FLATS, {"bedrooms": 2}).arguments == {"rooms": 2}
