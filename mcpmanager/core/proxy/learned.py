"""What was learned from use: (discover_tools query → the tool then called) pairs, on disk.

Only the query's text (shortened) and the tool's `server:tool` key are kept, with a count and the
time of the last use: never a call's arguments or results. The file lives beside the catalogue
cache, on this machine only, and is written atomically a moment after a change, off the event loop
(a call never waits for the disk). It is bounded: past MAX_ENTRIES the least recently used pair
goes, so a long-lived setup cannot grow it without end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcpmanager.core.signals import Signal
from mcpmanager.core.system.atomic_write import write_atomic
from mcpmanager.core.tasks import spawn

logger = logging.getLogger(__name__)

VERSION = 1
MAX_ENTRIES = 1000
MAX_QUERY_CHARS = 200  # a query is a request in words; a pasted blob is not worth keeping
SAVE_DELAY = 1.0  # seconds: a burst of calls shares one write


@dataclass(frozen=True)
class Learned:
    query: str  # as the client wrote it (whitespace folded, shortened)
    tool: str  # `server:tool`, stable whatever the exposed name becomes
    count: int  # calls that followed this query
    last: float  # wall-clock time of the latest
    place: int = 1  # where the search had put the tool (1: first) the latest time

    def describe(self) -> dict[str, Any]:
        return {"query": self.query, "tool": self.tool, "count": self.count, "last": self.last, "place": self.place}


def normal_query(query: str) -> str:
    text = " ".join(query.split())
    return text if len(text) <= MAX_QUERY_CHARS else text[:MAX_QUERY_CHARS]


def _pair(query: str, tool: str) -> tuple[str, str]:
    return (normal_query(query).casefold(), tool)


class LearnedStore:
    """The pairs, in memory and (with a `path`) on disk. `changed` fires on every change."""

    def __init__(self, path: Path | None = None, limit: int = MAX_ENTRIES) -> None:
        self.path = path
        self.limit = limit
        self._entries: dict[tuple[str, str], Learned] = {}
        self._save_pending = False
        self._dirty = False  # changed since written
        self.changed: Signal[None] = Signal("learned")

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Learned]:
        """Every pair, the most recently used first."""
        return sorted(self._entries.values(), key=lambda e: e.last, reverse=True)

    def load(self) -> None:
        """What the file holds (nothing when it is missing or unreadable: learning costs only itself)."""
        self._entries.clear()
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                return
            for item in data["learned"]:
                entry = Learned(normal_query(str(item["query"])), str(item["tool"]), int(item["count"]),
                                float(item["last"]), int(item.get("place", 1)))  # fmt: skip
                if entry.query and entry.count > 0:
                    self._entries[_pair(entry.query, entry.tool)] = entry
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            logger.warning("ignoring what was learned in %s: %s", self.path, exc)
            self._entries.clear()
        self._trim()

    def record(self, query: str, tool: str, now: float | None = None, place: int = 1) -> Learned | None:
        """`tool` was called after `query`: count it (None for an empty query)."""
        text = normal_query(query)
        if not text:
            return None
        key = _pair(text, tool)
        when = time.time() if now is None else now
        old = self._entries.get(key)
        entry = (
            replace(old, query=text, count=old.count + 1, last=when, place=place)
            if old
            else Learned(text, tool, 1, when, place)
        )
        self._entries[key] = entry
        self._trim()
        self._changed()
        return entry

    def forget(self, query: str, tool: str) -> bool:
        """Forget one pair; False if it was not there."""
        if self._entries.pop(_pair(query, tool), None) is None:
            return False
        self._changed()
        return True

    def forget_tool(self, tool: str) -> int:
        """Forget every pair of `tool`; how many went."""
        keys = [key for key in self._entries if key[1] == tool]
        for key in keys:
            del self._entries[key]
        if keys:
            self._changed()
        return len(keys)

    def forget_all(self) -> None:
        if self._entries:
            self._entries.clear()
            self._changed()

    def calls_by_tool(self) -> dict[str, int]:
        """How often each tool was called through discovery (summed over its queries)."""
        totals: dict[str, int] = {}
        for entry in self._entries.values():
            totals[entry.tool] = totals.get(entry.tool, 0) + entry.count
        return totals

    # On disk --------------------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        return {"version": VERSION, "learned": [e.describe() for e in self.entries()]}

    def save(self) -> None:
        """Write the file now if anything changed (atomically; a failure is logged: what was learned
        stays in memory)."""
        if self._dirty:
            self._dirty = False
            self._write(self.document())

    def _trim(self) -> None:
        if len(self._entries) > self.limit:
            kept = sorted(self._entries.items(), key=lambda item: item[1].last, reverse=True)[: self.limit]
            self._entries = dict(kept)

    def _changed(self) -> None:
        self._dirty = True
        self.changed.emit(None)
        if self.path is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a command, a test): write now
            self.save()
            return
        if not self._save_pending:
            self._save_pending = True
            spawn(self._save_soon(), name="learned pairs")

    async def _save_soon(self) -> None:
        await asyncio.sleep(SAVE_DELAY)
        self._save_pending = False
        if not self._dirty:
            return
        self._dirty = False
        document = self.document()  # taken on the loop: the thread only encodes and writes
        await asyncio.to_thread(self._write, document)

    def _write(self, document: dict[str, Any]) -> None:
        if self.path is None:
            return
        try:
            data = json.dumps(document, ensure_ascii=False).encode()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, data, 0o600, durable=False)
        except OSError as exc:
            logger.warning("cannot write what was learned to %s: %s", self.path, exc)
