"""Lines out of a byte stream, in linear time, with a cap: the one line framer, for every stream
of JSON-RPC lines (`serve --stdio` and the local socket, a stdio server's output, `connect`).

JSON-RPC over stdio is one message per line, and a line may be huge (a tool result of 50 MiB). A
buffer that is appended to and split again on every chunk costs time quadratic in the line's
length; here chunks are kept as they come and joined once, when the newline arrives. A line longer
than the cap is dropped as it streams (its memory freed at once) and reported as an `Overlong` in
its place, with its first bytes (where a JSON-RPC request names its id), so the reader can answer it
with an error and go on with the next line.

Nothing here but the standard library: `connect` frames its lines with it and must start fast.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD = 4096  # bytes of a dropped line that are kept


@dataclass(frozen=True)
class Overlong:
    """A line over the cap, dropped; `head` is its beginning."""

    head: bytes


class LineFramer:
    """Lines are `bytes`: a line one chunk holds is a slice of it, a longer one the join of its
    chunks (once, at its newline). Not a growing bytearray: the JSON reader copies a bytearray before
    parsing it, and the chunks are let go as the join completes.

    `ends`: each line keeps its newline (a relay hands lines on as they came, and a chunk that is
    one whole line is then passed on as it is, not copied); the cap counts a line without it."""

    def __init__(self, max_line: int | None = None, *, ends: bool = False) -> None:
        self.max_line = max_line
        self._end = 1 if ends else 0  # bytes of the newline a line keeps
        # What a line may hold with its newline (a part without one is over once past it, as well).
        self._cap = None if max_line is None else max_line + self._end
        self._parts: list[bytes] = []
        self.held = 0  # bytes kept of a line not ended yet
        self._dropping = False  # inside a line over the cap: discard until its newline
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Overlong]:
        """The complete lines `chunk` ends (without their newlines, unless `ends`); the rest waits for more."""
        lines: list[bytes | Overlong] = []
        start, tail, cap, size = 0, self._end, self._cap, len(chunk)
        while (end := chunk.find(b"\n", start)) != -1:
            line = chunk[start : end + tail]
            if self._parts or self._dropping or (cap is not None and len(line) > cap):
                lines.append(self._finish(line))  # the end of a longer line, or one over the cap
            else:
                lines.append(line)  # nearly every line: whole in this chunk (no call on its way)
            start = end + 1
            if start == size:
                return lines  # (a chunk nearly always ends with a line: no search past it)
        if start < size:
            self._keep(chunk[start:] if start else chunk)
        return lines

    def rest(self) -> bytes | Overlong | None:
        """What is left when the stream ends: a last line without a newline (or None)."""
        if self._dropping:
            return self._dropped()
        if not self._parts:
            return None
        if self.max_line is not None and self.held > self.max_line:  # (`ends`: the cap left room for a newline)
            self._start_dropping(b"")
            return self._dropped()
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
        self.held += len(piece)

    def _over(self, more: int) -> bool:
        return self._cap is not None and self.held + more > self._cap

    def _start_dropping(self, piece: bytes) -> None:
        self._head = (b"".join(self._parts) + piece[:HEAD])[:HEAD]
        self._parts, self.held, self._dropping = [], 0, True

    def _dropped(self) -> Overlong:
        dropped = Overlong(self._head)
        self._reset()
        return dropped

    def _reset(self) -> None:
        self._parts, self.held, self._dropping, self._head = [], 0, False, b""


def blank(line: bytes) -> bool:
    """Nothing but whitespace (without `strip()`, which may copy a line, however long)."""
    return not line or line.isspace()
