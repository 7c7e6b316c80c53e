"""Lines out of a byte stream, in linear time, with a cap.

JSON-RPC over stdio is one message per line, and a line may be huge (a tool result of 50 MiB). A
buffer that is appended to and split again on every chunk costs time quadratic in the line's
length; here chunks are kept as they come and joined once, when the newline arrives. A line longer
than the cap is dropped as it streams (its memory freed at once) and reported as an `Overlong` in
its place, with its first bytes (where a JSON-RPC request names its id), so the reader can answer it
with an error and go on with the next line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic_core
from pydantic import BaseModel

HEAD = 4096  # bytes of a dropped line that are kept


@dataclass(frozen=True)
class Overlong:
    """A line over the cap, dropped; `head` is its beginning."""

    head: bytes


class LineFramer:
    """Lines are `bytes`: a line one chunk holds is a slice of it, a longer one the join of its
    chunks (once, at its newline). Not a growing bytearray: the JSON reader copies a bytearray before
    parsing it, and the chunks are let go as the join completes."""

    def __init__(self, max_line: int | None = None) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._dropping = False  # inside a line over the cap: discard until its newline
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Overlong]:
        """The complete lines `chunk` ends (without their newlines); the rest waits for more."""
        lines: list[bytes | Overlong] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            lines.append(self._finish(chunk[start:end]))
            start = end + 1
        if start < len(chunk):
            self._keep(chunk[start:] if start else chunk)
        return lines

    def rest(self) -> bytes | Overlong | None:
        """What is left when the stream ends: a last line without a newline (or None)."""
        if self._dropping:
            return self._dropped()
        if not self._parts:
            return None
        return self._joined()

    def _finish(self, piece: bytes) -> bytes | Overlong:
        if not self._dropping and self._over(len(piece)):
            self._start_dropping(piece)
        if self._dropping:
            return self._dropped()
        if not self._parts:
            return piece
        self._parts.append(piece)
        return self._joined()

    def _joined(self) -> bytes:
        parts = self._parts
        self._reset()
        line = b"".join(parts)
        parts.clear()  # the chunks go now, not when the caller is done with the line
        return line

    def _keep(self, piece: bytes) -> None:
        if self._dropping:
            return
        if self._over(len(piece)):
            self._start_dropping(piece)
            return
        self._parts.append(piece)
        self._size += len(piece)

    def _over(self, more: int) -> bool:
        return self.max_line is not None and self._size + more > self.max_line

    def _start_dropping(self, piece: bytes) -> None:
        self._head = (b"".join(self._parts) + piece[:HEAD])[:HEAD]
        self._parts, self._size, self._dropping = [], 0, True

    def _dropped(self) -> Overlong:
        dropped = Overlong(self._head)
        self._reset()
        return dropped

    def _reset(self) -> None:
        self._parts, self._size, self._dropping, self._head = [], 0, False, b""


def blank(line: bytes) -> bool:
    """Nothing but whitespace (without `strip()`, which may copy a line, however long)."""
    return not line or line.isspace()


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
