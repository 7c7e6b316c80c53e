"""A message as one line of JSON: the same JSON whichever way it is written (straight from the
serializer, or streamed for a huge one), in pieces no larger than a slice."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from mcpmanager.core.system.lines import STREAMED, WRITE_SLICE, json_line, read_message

TRICKY = 'quotes " and \\ backslash, a\nnewline, a\ttab, \x01 control, é ü 漢字 😀, </script>'


def written(message: types.JSONRPCMessage) -> tuple[bytes, int]:
    pieces = [bytes(piece) for piece in json_line(message)]
    return b"".join(pieces), max(len(piece) for piece in pieces)


def result(text: str) -> types.JSONRPCResponse:
    content = [{"type": "text", "text": text}, {"type": "text", "text": TRICKY}]
    structured = {"n": 3, "x": 1.5, "ok": True, "none": None, "list": [1, "two", {"three": [3]}]}
    return types.JSONRPCResponse(
        jsonrpc="2.0", id=7, result={"content": content, "structuredContent": structured, "isError": False}
    )


@pytest.mark.parametrize("size", [10, STREAMED + 1, 3 * STREAMED + 12345])
def test_the_same_json_however_it_is_written(size: int) -> None:
    message = result("y" * (size - 7) + TRICKY[:7])
    line, largest = written(message)
    expected = type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line: newlines inside are escaped
    assert json.loads(line) == json.loads(expected)
    assert read_message(line[:-1]) == message
    assert largest <= max(WRITE_SLICE, 4 * STREAMED)  # never the whole of a huge line at once


def test_a_huge_request_is_streamed_too() -> None:
    arguments = {"text": "z" * (2 * STREAMED), "tricky": TRICKY}
    request = types.JSONRPCRequest(
        jsonrpc="2.0", id="a", method="tools/call", params={"name": "echo", "arguments": arguments}
    )
    line, largest = written(request)
    assert json.loads(line) == request.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert largest < 2 * STREAMED


def test_a_small_message_is_one_piece_with_its_line_end() -> None:
    """One write per message: a reader woken by a line without its end would wake a second time."""
    pieces = [bytes(piece) for piece in json_line(result("small"))]
    assert len(pieces) == 1 and pieces[0].endswith(b"\n") and pieces[0].count(b"\n") == 1
    big = [bytes(piece) for piece in json_line(result("y" * WRITE_SLICE))]
    assert len(big) > 1 and big[-1] == b"\n"
