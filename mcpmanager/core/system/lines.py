"""Lines out of a byte stream, in linear time, with a cap.

JSON-RPC over stdio is one message per line, and a line may be huge (a tool result of 50 MiB). A
buffer that is appended to and split again on every chunk costs time quadratic in the line's
length; here chunks are kept as they come and joined once, when the newline arrives. A line longer
than the cap is dropped as it streams (its memory freed at once) and reported as an `Overlong` in
its place, with its first bytes (where a JSON-RPC request names its id), so the reader can answer it
with an error and go on with the next line.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types
import pydantic_core
from pydantic import BaseModel

HEAD = 4096  # bytes of a dropped line that are kept


@dataclass(frozen=True)
class Overlong:
    """A line over the cap, dropped; `head` is its beginning."""

    head: bytes


class LineFramer:
    """Lines are `bytes` when one chunk holds them, else the `bytearray` they were gathered in (it is
    handed over, not copied: a 50 MiB line costs 50 MiB here, not the chunks plus their join)."""

    def __init__(self, max_line: int | None = None) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._dropping = False  # inside a line over the cap: discard until its newline
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | bytearray | Overlong]:
        """The complete lines `chunk` ends (without their newlines); the rest waits for more."""
        lines: list[bytes | bytearray | Overlong] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            lines.append(self._finish(chunk[start:end]))
            start = end + 1
        if start < len(chunk):
            self._keep(chunk[start:] if start else chunk)
        return lines

    def rest(self) -> bytes | bytearray | Overlong | None:
        """What is left when the stream ends: a last line without a newline (or None)."""
        if self._dropping:
            return self._dropped()
        if not self._buffer:
            return None
        line = self._buffer
        self._reset()
        return line

    def _finish(self, piece: bytes) -> bytes | bytearray | Overlong:
        if not self._dropping and self._over(len(piece)):
            self._start_dropping(piece)
        if self._dropping:
            return self._dropped()
        if not self._buffer:
            return piece
        self._buffer += piece
        line = self._buffer
        self._reset()
        return line

    def _keep(self, piece: bytes) -> None:
        if self._dropping:
            return
        if self._over(len(piece)):
            self._start_dropping(piece)
            return
        self._buffer += piece

    def _over(self, more: int) -> bool:
        return self.max_line is not None and len(self._buffer) + more > self.max_line

    def _start_dropping(self, piece: bytes) -> None:
        self._head = (bytes(self._buffer[:HEAD]) + piece[:HEAD])[:HEAD]
        self._buffer, self._dropping = bytearray(), True

    def _dropped(self) -> Overlong:
        dropped = Overlong(self._head)
        self._reset()
        return dropped

    def _reset(self) -> None:
        self._buffer, self._dropping, self._head = bytearray(), False, b""


def blank(line: bytes | bytearray) -> bool:
    """Nothing but whitespace (without `strip()`, which copies a bytearray, however long)."""
    return not line or line.isspace()


WRITE_SLICE = 1 << 20  # bytes handed to a pipe at a time: its buffer never holds a whole huge line


def json_line(message: BaseModel) -> list[memoryview]:
    """A message as one line of compact JSON, in slices to write one after another.

    The bytes come straight from the serializer: `model_dump_json().encode() + b"\\n"` makes a str,
    its bytes and their copy with the newline (three copies of a 50 MiB result at once), and a pipe
    that cannot take it all at once copies the rest into its buffer (a fourth)."""
    data = type(message).__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    view = memoryview(data)
    return [view[start : start + WRITE_SLICE] for start in range(0, len(view), WRITE_SLICE)] + [memoryview(b"\n")]


def read_message(line: bytes | bytearray) -> types.JSONRPCMessage:
    """One JSON-RPC message off a line (raises ValueError if it is none).

    Parsed to Python objects first, then validated: the union's own JSON reader holds about five
    copies of a huge string at once (a 50 MiB result cost 200 MiB more, against 50 here), and small
    messages take the same time either way."""
    return types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(line), by_name=False)
