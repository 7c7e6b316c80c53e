"""The caching hints of a server's answer and of a merged list (`supervisor/freshness.py`)."""

from __future__ import annotations

import mcp_types as types

from mcpmanager.core.supervisor.freshness import DEFAULT, Freshness, merged, of_result


def test_a_merged_list_takes_the_smallest_ttl_and_is_public_only_when_every_part_is() -> None:
    parts = [Freshness(60000, "public"), Freshness(5000, "public"), Freshness(30000, "public")]
    assert merged(parts) == Freshness(5000, "public")
    assert merged([*parts, Freshness(90000, "private")]) == Freshness(5000, "private")
    assert merged([Freshness(60000, "public"), DEFAULT]) == Freshness(0, "private")  # a hintless server


def test_a_list_with_no_servers_part_gets_the_default() -> None:
    assert merged([]) == DEFAULT == Freshness(0, "private")


def test_only_the_hints_a_server_set_count() -> None:
    given = types.ListToolsResult(tools=[], ttl_ms=1234, cache_scope="public")
    assert of_result(given) == Freshness(1234, "public")
    # A handshake-era session's result: the SDK defaults the fields, unset (the server gave none).
    assert of_result(types.ListToolsResult(tools=[])) == DEFAULT
    assert of_result(types.ListToolsResult.model_validate({"tools": [], "ttlMs": 10})) == Freshness(10, "private")
    assert of_result(object()) == DEFAULT


def test_the_hints_fill_a_result_model() -> None:
    result = types.ListPromptsResult(prompts=[], **Freshness(700, "public").fields())
    dumped = result.model_dump(by_alias=True)
    assert (dumped["ttlMs"], dumped["cacheScope"]) == (700, "public")
