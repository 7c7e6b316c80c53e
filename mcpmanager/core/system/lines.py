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

HEAD = 4096  # bytes of a dropped line that are kept


@dataclass(frozen=True)
class Overlong:
    """A line over the cap, dropped; `head` is its beginning."""

    head: bytes


class LineFramer:
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
        line = b"".join(self._parts)
        self._reset()
        return line

    def _finish(self, piece: bytes) -> bytes | Overlong:
        if not self._dropping and self._over(len(piece)):
            self._start_dropping(piece)
        if self._dropping:
            return self._dropped()
        if not self._parts:
            return piece
        self._parts.append(piece)
        line = b"".join(self._parts)
        self._reset()
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
