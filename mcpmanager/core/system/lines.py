"""JSON-RPC messages as lines: one written as compact JSON in pieces (`json_line`), one read off a
line (`read_message`, or `parse_line` then `to_message`). The lines themselves come out of the one
framer, `line_framer.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import mcp_types as types
import pydantic_core
from pydantic import BaseModel

WRITE_SLICE = 1 << 20  # bytes handed to a pipe at a time: its buffer never holds a whole huge line
STREAMED = 1 << 20  # a message whose strings hold more than this many characters is streamed out
_LOOK = 2000  # values looked at to tell (a list of many small items is left to the serializer)


def json_line(message: BaseModel) -> Iterable[bytes | memoryview]:
    """A message as one line of compact JSON, in pieces to write one after another.

    A huge one (a 50 MiB tool result) is streamed: its values encoded a slice at a time, so the line
    never exists whole; the serializer would hold it twice or more while it grows, then copy it out.
    Any other comes straight from the serializer's bytes (`model_dump_json().encode() + b"\n"`
    made three copies), in slices, so a pipe that cannot take it at once buffers a slice, not it;
    a small one (nearly every message) as one piece with its line end."""
    payload = getattr(message, "result", None) or getattr(message, "params", None)
    if isinstance(payload, dict) and _longer_than(payload, STREAMED):
        return _streamed(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
    data = type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    if len(data) < WRITE_SLICE:  # one write: a reader woken by a line without its end wakes twice
        return [data + b"\n"]
    view = memoryview(data)
    return [view[start : start + WRITE_SLICE] for start in range(0, len(view), WRITE_SLICE)] + [memoryview(b"\n")]


def _longer_than(value: object, limit: int) -> bool:
    """Whether the strings in `value` hold more than `limit` characters (looking at a bounded number
    of values: cheap for the small messages nearly every call is)."""
    stack, total = [value], 0
    for _ in range(_LOOK):
        if not stack:
            return False
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
            if total > limit:
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _streamed(value: object) -> Iterator[bytes]:
    for piece in _pieces(value):
        yield piece.encode()
    yield b"\n"


def _pieces(value: object) -> Iterator[str]:
    """Compact JSON text of a JSON value, a string of any length in slices of at most STREAMED."""
    if isinstance(value, str):
        if len(value) <= STREAMED:
            yield json.dumps(value, ensure_ascii=False)
            return
        yield '"'
        for start in range(0, len(value), STREAMED):
            yield json.dumps(value[start : start + STREAMED], ensure_ascii=False)[1:-1]
        yield '"'
    elif isinstance(value, dict):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield ("," if n else "") + json.dumps(str(key), ensure_ascii=False) + ":"
            yield from _pieces(item)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for n, item in enumerate(value):
            if n:
                yield ","
            yield from _pieces(item)
        yield "]"
    else:
        yield json.dumps(value)


def read_message(line: bytes) -> types.JSONRPCMessage:
    """One JSON-RPC message off a line (raises ValueError if it is none).

    Parsed to Python objects first, then validated: the union's own JSON reader holds about five
    copies of a huge string at once (a 50 MiB result cost 200 MiB more, against 50 here), and small
    messages take the same time either way."""
    return to_message(parse_line(line))


def parse_line(line: bytes) -> Any:
    """A line's JSON value (raises ValueError if it is not JSON): the one parse of a message, which
    a fast path may route on before (or instead of) validating it."""
    return pydantic_core.from_json(line)


def to_message(value: Any) -> types.JSONRPCMessage:
    """A parsed line as a JSON-RPC message (raises ValueError if it is none)."""
    return types.jsonrpc_message_adapter.validate_python(value, by_name=False)
