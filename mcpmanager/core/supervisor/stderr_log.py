"""A server's stderr as a bounded line stream: ring buffer, capped log file, live listeners.

Bytes arrive in chunks of any size; an incremental decoder carries split UTF-8 sequences and the
partial last line across chunks. Terminal escapes are stripped and secrets masked (the server's own
secret values and anything of a secret's shape, `core/config/secrets.py`) before a line is kept
anywhere: the ring, the file, a pane, an error quoting the tail. The log file is appended per chunk
and rotated to `<name>.1` when it passes its cap, so a flooding server costs bounded memory and disk.
"""

from __future__ import annotations

import codecs
import contextlib
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcpmanager.core.config.secrets import Masker
from mcpmanager.core.signals import Signal

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MAX_LINE = 8192  # a line longer than this is cut: one runaway line must not eat the ring
_MASKED_BEYOND_CUT = 512  # masked before cutting, so a secret astride the cut is masked whole
RETRY_WRITE = 2.0  # seconds before a log file that could not be written is tried again
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
        self._secrets = list(secrets)
        self.mask = Masker(self._secrets)  # also for texts quoting this log (errors, reasons)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial = ""
        self._file: IO[str] | None = None
        self.appended: Signal[list[LogLine]] = Signal("stderr lines")  # each batch of lines kept
        # Why the log file cannot be written now (a full disk), None while it can; `troubled` says
        # when that changes.
        self.trouble: str | None = None
        self.troubled: Signal[str | None] = Signal("log file trouble")
        self._unwritten = 0
        self._retry_at = 0.0
        self.total_lines = 0

    def also_mask(self, secrets: Iterable[str]) -> None:
        """Mask these values too from now on (a secret filled from the keyring at start)."""
        new = [value for value in secrets if value not in self._secrets]
        if new:
            self._secrets += new
            self.mask = Masker(self._secrets)

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
            with contextlib.suppress(OSError):  # a full disk: what was buffered is lost, nothing more
                self._file.close()
            self._file = None

    def _clean(self, line: str) -> str:
        line = _CONTROL.sub("", _ESCAPES.sub("", line.rstrip("\r")))
        if len(line) > _MAX_LINE:
            return self.mask(line[: _MAX_LINE + _MASKED_BEYOND_CUT])[:_MAX_LINE] + " …[cut]"
        return self.mask(line)

    def _write(self, batch: list[LogLine]) -> None:
        """Append to the log file. Writing it can never take the server down: on an error (a full
        disk) the lines stay in the ring, `trouble` says why, and the file is tried again later, with
        a line saying how many were not written."""
        if self.path is None:
            return
        if self.trouble is not None and time.monotonic() < self._retry_at:
            self._unwritten += len(batch)
            return
        stamp = _stamp(batch[0].time)
        text = "".join(f"{stamp} {line.text}\n" for line in batch)
        if self._unwritten:  # back from a full disk: the lines the ring still holds come first
            kept = list(self.lines)[: -len(batch)][-self._unwritten :] if len(batch) < len(self.lines) else []
            lost = self._unwritten - len(kept)
            note = f"{stamp} [mcpmanager] {lost} lines were lost here ({self.trouble})\n" if lost else ""
            text = note + "".join(f"{_stamp(line.time)} {line.text}\n" for line in kept) + text
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(text)
            self._file.flush()
            if self._file.tell() > self.max_bytes:
                self._rotate()
        except OSError as exc:
            self.close()
            self._unwritten += len(batch)
            self._retry_at = time.monotonic() + RETRY_WRITE
            if self.trouble is None:
                self.trouble = f"cannot write {self.path.name}: {exc.strerror or exc}"
                self.troubled.emit(self.trouble)
            return
        self._unwritten = 0
        if self.trouble is not None:
            self.trouble = None
            self.troubled.emit(None)

    def _rotate(self) -> None:
        assert self.path is not None and self._file is not None
        self._file.close()
        self._file = None
        self.path.replace(self.path.with_name(self.path.name + ".1"))


def _stamp(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when))
