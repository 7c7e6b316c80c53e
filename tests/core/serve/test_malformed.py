"""`malformed.refusal`: which lines that are no JSON-RPC message get an error with their id, and which
none (no request id can be named from a real parse of the line)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpmanager.core.serve.malformed import refusal
from mcpmanager.core.system.lines import parse_line, to_message


def answer_to(line: bytes) -> dict[str, Any] | None:
    """What the stdio path does with `line`: the strict parse, then the message check."""
    value: Any = None
    try:
        value = parse_line(line)
        to_message(value)
    except ValueError as exc:
        answer = refusal(line, exc, value)
        return None if answer is None else json.loads(answer)
    raise AssertionError("the line is a valid message")


@pytest.mark.parametrize(
    ("line", "request_id", "says"),
    [
        (rb'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\ud800"}}', 7, "not strict JSON"),
        (rb'{"jsonrpc":"2.0","id":"x","method":"ping","params":{"n":"\udc00"}}', "x", "not strict JSON"),
        (b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"x"}', 8, "params"),
        (b'{"jsonrpc":"1.0","id":9,"method":"tools/list"}', 9, "jsonrpc"),
        (b'{"jsonrpc":"2.0","id":10,"method":5}', 10, "method"),
        (b'{"id":11,"method":"tools/list"}', 11, "jsonrpc"),
    ],
)
def test_a_request_that_is_no_message_is_refused_by_its_id(line: bytes, request_id: object, says: str) -> None:
    answer = answer_to(line)
    assert answer is not None and answer["id"] == request_id, answer
    assert answer["error"]["code"] == -32600 and says in answer["error"]["message"], answer


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":',  # cut short: no id to trust
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}',  # a notification
        b'{"jsonrpc":"2.0","id":true,"method":"ping","params":"x"}',  # an id nobody can be waiting on
        b'{"jsonrpc":"2.0","id":null,"method":"ping","params":"x"}',
        b'{"jsonrpc":"2.0","id":13,"result":"x","error":{}}',  # response-shaped: no request waits on it
        b"[1, 2]",
        b"[" * 100_000,  # nested past any parser's depth
    ],
)
def test_a_line_naming_no_request_gets_no_answer(line: bytes) -> None:
    assert answer_to(line) is None


def test_a_string_id_with_half_a_pair_is_answered_as_text() -> None:
    answer = answer_to(rb'{"jsonrpc":"2.0","id":"a\ud800","method":"ping","params":{"\ud800":1}}')
    assert answer is not None and answer["id"] == "a\\ud800", answer
