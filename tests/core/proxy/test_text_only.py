"""The fast lane's shortcut for results of text blocks alone gives back exactly what the SDK's sieve
(`serialize_server_result`) gives a handshake-era client, in every handshake-era version, and leaves
every other result to the sieve."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpmanager.core.proxy.fast_lane import _text_only

TEXT = {"type": "text", "text": "hi"}
TAKEN: list[dict[str, Any]] = [
    {"content": [TEXT]},
    {"content": [TEXT], "isError": False},
    {"content": [TEXT, {"type": "text", "text": ""}], "isError": True},
    {"content": []},
    {"content": [TEXT], "isError": False, "resultType": "complete"},  # a 2026-07-28 server's
    {"content": [{"text": "order of keys", "type": "text"}]},
]
LEFT: list[dict[str, Any]] = [
    {"content": [TEXT], "structuredContent": {"a": 1}},
    {"content": [TEXT], "_meta": {"trace": "x"}},
    {"content": [{"type": "text", "text": "hi", "annotations": {"priority": 1}}]},
    {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    {"content": [{"type": "text", "text": 3}]},
    {"content": [{"type": "text"}]},
    {"content": [TEXT], "isError": "yes"},
    {"content": [TEXT], "resultType": "input_required"},
    {"content": "not a list"},
    {"isError": False},
]


@pytest.mark.parametrize("version", sorted(HANDSHAKE_PROTOCOL_VERSIONS))
@pytest.mark.parametrize("result", TAKEN)
def test_a_text_only_result_is_what_the_sieve_gives(version: str, result: dict[str, Any]) -> None:
    assert _text_only(result) == serialize_server_result("tools/call", version, result)


@pytest.mark.parametrize("result", LEFT)
def test_any_other_result_is_left_to_the_sieve(result: dict[str, Any]) -> None:
    assert _text_only(result) is None
