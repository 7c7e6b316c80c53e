"""A server's stderr as a bounded line stream: ring buffer, capped log file, live listeners.

Bytes arrive in chunks of any size; an incremental decoder carries split UTF-8 sequences and the
partial last line across chunks. Terminal escapes are stripped and known secret values masked
before a line is kept anywhere. The log file is appended per chunk and rotated to `<name>.1` when
it passes its cap, so a flooding server costs bounded memory and disk.
"""

from __future__ import annotations

import codecs
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcpmanager.core.signals import Signal

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MAX_LINE = 8192  # a line longer than this is cut: one runaway line must not eat the ring
MESSAGE_PREFIX = "[log "  # an MCP log message the server sent (`message`), not its stderr


@dataclass(frozen=True)
class LogLine:
    time: float
    text: str


class StderrLog:
    def __init__(
        self,
        path: Path | None,
        ring_lines: int = 2000,
        max_bytes: int = 1 << 20,
        secrets: Iterable[str] = (),
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.lines: deque[LogLine] = deque(maxlen=ring_lines)
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial = ""
        self._file: IO[str] | None = None
        self.appended: Signal[list[LogLine]] = Signal("stderr lines")  # each batch of lines kept
        self.total_lines = 0

    def feed(self, chunk: bytes) -> None:
        """Take a raw chunk from the pipe; complete lines are kept, the partial tail waits."""
        text = self._partial + self._decoder.decode(chunk)
        parts = text.split("\n")
        self._partial = parts.pop()
        if len(self._partial) > _MAX_LINE:  # no newline for a long while: flush what we have
            parts.append(self._partial)
            self._partial = ""
        self.add(parts)

    def finish(self) -> None:
        """The pipe closed: keep whatever partial line is left."""
        rest = self._partial + self._decoder.decode(b"", final=True)
        self._partial = ""
        if rest:
            self.add([rest])

    def note(self, text: str) -> None:
        """A line of our own (spawn, exit) in the same stream, so the story reads in order."""
        self.add([f"[mcpmanager] {text}"])

    def message(self, level: str, source: str | None, text: str) -> None:
        """A log message the server sent over MCP, shown with its level among its stderr lines."""
        prefix = f"{MESSAGE_PREFIX}{level}] " + (f"{source}: " if source else "")
        self.add([prefix + line for line in text.splitlines() or [""]])

    def add(self, raw_lines: Iterable[str]) -> None:
        now = time.time()
        batch = [LogLine(now, self._clean(line)) for line in raw_lines]
        if not batch:
            return
        self.lines.extend(batch)
        self.total_lines += len(batch)
        self._write(batch)
        self.appended.emit(batch)  # a pane's bug never stops this server's stderr reading (Signal)

    def tail(self, count: int = 10, stderr_only: bool = False) -> list[str]:
        """The last `count` lines; `stderr_only` leaves out MCP log messages (they may be about one
        client's work, and errors quoting the tail go to any client)."""
        if not stderr_only:
            start = max(len(self.lines) - count, 0)
            return [self.lines[i].text for i in range(start, len(self.lines))]
        found: list[str] = []
        for line in reversed(self.lines):
            if len(found) == count:
                break
            if not line.text.startswith(MESSAGE_PREFIX):
                found.append(line.text)
        return found[::-1]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _clean(self, line: str) -> str:
        line = _CONTROL.sub("", _ESCAPES.sub("", line.rstrip("\r")))
        if len(line) > _MAX_LINE:
            line = line[:_MAX_LINE] + " …[cut]"
        for secret in self._secrets:
            line = line.replace(secret, "***")
        return line

    def _write(self, batch: list[LogLine]) -> None:
        if self.path is None:
            return
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(batch[0].time))
        self._file.write("".join(f"{stamp} {line.text}\n" for line in batch))
        self._file.flush()
        if self._file.tell() > self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        assert self.path is not None and self._file is not None
        self._file.close()
        self._file = None
        self.path.replace(self.path.with_name(self.path.name + ".1"))
