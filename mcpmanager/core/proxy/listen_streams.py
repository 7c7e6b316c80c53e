"""`subscriptions/listen` as mcpmanager serves it to 2026-07-28 clients (SEP-2575): one request is
one stream, acknowledged first with the filter honoured, then every event within that filter, each
frame stamped with the listen request's id, until the client leaves or `close` ends it gracefully.

The SDK's `ListenHandler` does the same for the change events it knows; this one also carries the
tasks extension's `notifications/tasks` (SEP-2663) for the task ids the filter names (`taskIds`),
which `Tasks.watch` decides on and feeds. One writer per stream (this handler's task), so the ack
is the first frame and frames keep the order they were put in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, cast

import anyio
import anyio.streams.memory
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY, ServerEvent, event_matches, event_to_notification
from pydantic import BaseModel

logger = logging.getLogger(__name__)

TASK_IDS = "taskIds"  # the extension's key in a listen filter and in its ack
Frame = ServerEvent | dict[str, Any]  # a change event, or a task's state (`notifications/tasks` params)
Deliver = Callable[[dict[str, Any]], None]
# For one listen request, follow these task ids: (the ids followed, how to stop following them).
WatchTasks = Callable[[ServerRequestContext[Any, Any], list[str], Deliver], tuple[list[str], Callable[[], None]]]


class TaskNotification(BaseModel):
    """The extension's `notifications/tasks`: a task's full state, as `tasks/get` would answer (the
    SDK has no type for it)."""

    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: dict[str, Any]


class ListenStreams:
    def __init__(
        self,
        bus: SubscriptionBus,
        watch_tasks: WatchTasks | None = None,
        max_streams: int = 1024,
        max_buffered: int = 1024,
    ) -> None:
        self._bus = bus
        self._watch_tasks = watch_tasks
        self._max_streams = max_streams
        self._max_buffered = max_buffered
        self._streams: set[anyio.streams.memory.MemoryObjectSendStream[Frame]] = set()

    def count(self) -> int:
        """Streams open now (modern clients listening)."""
        return len(self._streams)

    def close(self) -> None:
        """End every stream gracefully: each sends what it holds, then its result."""
        for stream in list(self._streams):
            stream.close()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        listen_id = ctx.request_id
        if listen_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        if len(self._streams) >= self._max_streams:
            raise MCPError(types.INTERNAL_ERROR, "Subscription limit reached")
        requested = params.notifications
        honored = _honored(requested)
        uris = frozenset(honored.resource_subscriptions or ())
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: listen_id}
        # Buffered, so a publisher never waits for a slow client; a client that stopped reading
        # loses its stream at the cap (there is no replay: it listens again and reads again).
        send, receive = anyio.create_memory_object_stream[Frame](self._max_buffered)

        def put(frame: Frame) -> None:
            try:
                send.send_nowait(frame)
            except anyio.ClosedResourceError:
                pass  # closed (`close`, or the cap): the stream is ending
            except anyio.WouldBlock:
                logger.warning("listen stream %r: its client stopped reading; ending it", listen_id)
                self._streams.discard(send)
                send.close()

        def on_event(event: ServerEvent) -> None:
            if event_matches(honored, uris, event):
                put(event)

        # Following begins before the ack is written, so nothing said meanwhile is lost; it is
        # written after the ack all the same, this task being the stream's only writer.
        unsubscribe = self._bus.subscribe(on_event)
        unwatch: Callable[[], None] = _nothing
        self._streams.add(send)
        try:
            asked = _task_ids(requested)
            if asked is not None and self._watch_tasks is not None:
                watched, unwatch = self._watch_tasks(ctx, asked, put)
                if watched:
                    honored = honored.model_copy(update={TASK_IDS: watched})
            ack = types.SubscriptionsAcknowledgedNotificationParams(notifications=honored, _meta=meta)
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(params=ack), related_request_id=listen_id
            )
            async for frame in receive:
                if isinstance(frame, dict):
                    notification: Any = TaskNotification(params={**frame, "_meta": meta})
                else:
                    notification = event_to_notification(frame, meta)
                await ctx.session.send_notification(cast(Any, notification), related_request_id=listen_id)
        finally:
            for stop in (unsubscribe, unwatch):
                try:
                    stop()
                except Exception:  # a stream's cleanup must not be cut short by one that fails
                    logger.exception("ending listen stream %r", listen_id)
            self._streams.discard(send)
            send.close()
            receive.close()
        return types.SubscriptionsListenResult(_meta=meta)


def _nothing() -> None:
    return None


def _honored(requested: types.SubscriptionFilter) -> types.SubscriptionFilter:
    """What of the change events asked for is delivered: all of them (whether one ever comes is the
    servers' affair), written without the false flags and empty lists."""
    return types.SubscriptionFilter(
        tools_list_changed=True if requested.tools_list_changed else None,
        prompts_list_changed=True if requested.prompts_list_changed else None,
        resources_list_changed=True if requested.resources_list_changed else None,
        resource_subscriptions=list(requested.resource_subscriptions) if requested.resource_subscriptions else None,
    )


def _task_ids(requested: types.SubscriptionFilter) -> list[str] | None:
    """The task ids a filter asks to follow (None: it asks for no task's notifications)."""
    asked = (requested.model_extra or {}).get(TASK_IDS)
    if not isinstance(asked, list):
        return None
    return [task_id for task_id in asked if isinstance(task_id, str)]
