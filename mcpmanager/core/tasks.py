"""Named, strongly referenced background tasks.

asyncio keeps only a weak reference to a task: one nobody holds can be garbage-collected mid-flight,
and an exception in it is reported (if at all) long after the fact. Every background task of the core
goes through `spawn`, which names it, keeps it alive until done and logs its failure at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, _T], name: str) -> asyncio.Task[_T]:
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _running.add(task)
    task.add_done_callback(_finished)
    return task


def _finished(task: asyncio.Task[Any]) -> None:
    _running.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.error("task %s failed", task.get_name(), exc_info=exc)


def running_tasks() -> list[asyncio.Task[Any]]:
    """Background tasks still alive (tests use it to prove nothing leaks)."""
    return [t for t in _running if not t.done()]


async def first_of(*events: anyio.Event) -> None:
    """Return when any of `events` is set."""
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(wait, event)
