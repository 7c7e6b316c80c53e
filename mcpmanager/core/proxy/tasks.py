"""Tasks through the proxy (docs/protocol.md, "Tasks"): a long tool call that the server runs as a
task, polled, instead of answering the call itself.

* A client that takes tasks (a 2026-07-28 client declaring `io.modelcontextprotocol/tasks`, or a
  handshake-era client sending `task` on its tools/call) gets the task: mcpmanager gives it an id of
  its own, opaque, mapped to (server, the server's id), so two servers' ids never meet and a client
  cannot name another server's task; its `tasks/*` requests go to the owner under the server's id.
* A server's announcement of a task's status reaches the client that took the task, under its id:
  on the connection of a handshake-era client (`notifications/tasks/status`), on the listen streams
  that named it for a 2026-07-28 client (`notifications/tasks`, `watch`).
* Any other client never sees a task: mcpmanager runs it for the call (`_run`: poll, honouring
  `pollIntervalMs`, answer its questions, report progress) and answers with the result, bounded by
  `supervisor.taskTimeout`; the client giving up (cancel, disconnect) cancels the task on the server.

The flavours may differ on the two sides (a 2025-11-25 client of a 2026-07-28 server): every task's
state is kept in the extension's shape (`task_calls.Snapshot`) and written out in the client's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter, ValidationError

from mcpmanager.core.proxy.asking import ClientAsks
from mcpmanager.core.proxy.callers import Caller, Callers
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.listen_streams import Deliver
from mcpmanager.core.proxy.task_wire import (
    Wanted,
    check_named,
    created_answer,
    final_result,
    for_client,
    tasks_wanted,
)
from mcpmanager.core.supervisor import task_calls
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.task_calls import EXTENSION, TERMINAL, Flavour, Snapshot, task_support
from mcpmanager.core.supervisor.tool_calls import ProgressCallback, Unavailable
from mcpmanager.core.tool_results import error_result

logger = logging.getLogger(__name__)

CallResult = types.CallToolResult | types.InputRequiredResult
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)
DEFAULT_POLL = 1.0  # seconds between polls when the server suggests none
MAX_POLL = 30.0  # a server suggesting more is polled this often anyway (a status missed costs that)
CANCEL_WAIT = 5.0  # seconds to tell a server its task is cancelled, once the client gave up
MAX_KEPT = 10_000  # tasks remembered at once; the oldest go first past it
KEPT_WITHOUT_TTL = 24 * 3600.0  # a task with no ttl is forgotten after a day


class _TaskParams(types.RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any] | None = None


@dataclass
class _Task:
    server: str
    server_id: str
    how: Flavour  # the server's flavour
    tool: str
    owner: int | None  # the handshake-era connection that made it (None: a 2026-07-28 client's)
    session: ServerSession | None  # where its status notifications go (a handshake-era client's)
    expires: float


class Tasks:
    def __init__(
        self, servers: Mapping[str, Downstream], connections: Connections, callers: Callers, asks: ClientAsks
    ) -> None:
        self.servers = servers
        self.connections = connections
        self.callers = callers
        self.asks = asks
        self._tasks: dict[str, _Task] = {}  # our id → the task
        self._ours: dict[tuple[str, str], str] = {}  # (server, its id) → our id
        self._heard: dict[tuple[str, str], asyncio.Event] = {}  # runs waiting for a status
        self._watchers: dict[str, dict[object, Deliver]] = {}  # our id → the listen streams following it
        # Each tools/call in flight, by its request (`_request`): what it says about tasks. Looked up
        # by the request a call is made for *now*, not the one that began it: after a round of
        # questions (a server's, or an approval) the client's retry is the request that must carry
        # the task, while the call goes on in the first one's run.
        self._wanted: dict[tuple[int, Any], Wanted] = {}
        connections.on_close(self._client_gone)

    # The hooks ------------------------------------------------------------------------------------

    def install(self, server: Server[Any]) -> None:
        """Serve `tasks/*` on a mode's server and see its tools/calls first (`middleware`)."""
        server.add_request_handler("tasks/get", _TaskParams, self._on_get)
        server.add_request_handler("tasks/result", _TaskParams, self._on_result)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self._on_list)
        server.add_request_handler("tasks/cancel", _TaskParams, self._on_cancel)
        server.add_request_handler("tasks/update", _UpdateParams, self._on_update)
        server.middleware.insert(0, self._middleware)

    def offered(self) -> bool:
        """Whether to advertise tasks: some enabled server speaks them, or one has not connected yet."""
        for downstream in self.servers.values():
            if downstream.config.disabled:
                continue
            if downstream.declared is None or task_calls.flavour(downstream, downstream.declared) is not None:
                return True
        return False

    def takes(self, spec: Mapping[str, Any], downstream: Downstream) -> bool:
        """Whether a call of this tool goes through here: its server speaks tasks and the tool may run as one."""
        return task_calls.may_be_task(spec, downstream, downstream.declared)

    async def _middleware(self, ctx: ServerRequestContext[Any, Any], call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """A tools/call: note whether its client takes a task; if one was made for it, answer with it."""
        if ctx.method != "tools/call":
            return await call_next(ctx)
        wanted, key = tasks_wanted(ctx), _request(ctx)
        self._wanted[key] = wanted
        try:
            answer = await call_next(ctx)
        finally:
            self._wanted.pop(key, None)
        if wanted.created is None:
            return answer
        return created_answer(wanted, answer)

    # A tools/call ---------------------------------------------------------------------------------

    async def call(
        self,
        caller: Caller,
        downstream: Downstream,
        tool: str,
        spec: Mapping[str, Any],
        arguments: dict[str, Any] | None,
        progress: ProgressCallback | None,
        answers: types.InputResponses | None,
        state: str | None,
    ) -> CallResult:
        how = task_calls.flavour(downstream, downstream.declared)
        if how is None:
            return await downstream.call_tool(tool, arguments, progress, answers, state)
        wanted = self._wanted.get(_request(caller.ctx))  # the retry's, after a round of questions
        takes = wanted is not None and wanted.takes
        as_task = takes or task_support(spec) == "required"
        ttl = wanted.ttl_ms if wanted is not None and takes else None
        started = await task_calls.start_call(downstream, how, tool, arguments, as_task, ttl, answers, state, progress)
        if not isinstance(started, dict):
            return started
        if takes and wanted is not None:
            ours = self._keep(downstream.name, started["taskId"], how, tool, caller, started.get("ttlMs"))
            wanted.created = for_client(started, ours, wanted.modern, created=True)
            return types.CallToolResult(content=[types.TextContent(text=f"Task {ours} of '{tool}' was created.")])
        return await self._run(caller, downstream, how, tool, started, progress)

    async def _run(
        self,
        caller: Caller,
        downstream: Downstream,
        how: Flavour,
        tool: str,
        snapshot: Snapshot,
        progress: ProgressCallback | None,
    ) -> types.CallToolResult:
        """Run a task the client never sees to its end; its result, or an isError result saying why none."""
        bound = downstream.settings.task_timeout
        server_id, name = snapshot["taskId"], downstream.name
        reported, count = None, 0
        try:
            with anyio.move_on_after(bound) as waited:
                while snapshot.get("status") not in TERMINAL:
                    status = (snapshot.get("status"), snapshot.get("statusMessage"))
                    if progress is not None and status != reported:
                        reported, count = status, count + 1
                        await progress(count, None, snapshot.get("statusMessage") or f"task {snapshot.get('status')}")
                    if snapshot.get("status") == "input_required":
                        snapshot = await self._give_input(caller, downstream, how, snapshot)
                        if snapshot.get("status") in TERMINAL:
                            break
                    else:
                        await self._pause(name, server_id, snapshot.get("pollIntervalMs"))
                    snapshot = await task_calls.get(downstream, how, server_id)
        except asyncio.CancelledError:  # the client cancelled its request or went away: so does the task
            with anyio.CancelScope(shield=True):
                await self._cancel_quietly(downstream, server_id)
            raise
        except (MCPError, Unavailable) as exc:
            return error_result(f"Server '{name}' lost its task for '{tool}': {downstream.log.mask(str(exc))}")
        if waited.cancelled_caught:
            await self._cancel_quietly(downstream, server_id)
            return error_result(
                f"Server '{name}' did not finish the task for '{tool}' within {bound:g} s "
                "(supervisor.taskTimeout); it was cancelled."
            )
        return final_result(name, tool, snapshot)

    async def _give_input(self, caller: Caller, downstream: Downstream, how: Flavour, snapshot: Snapshot) -> Snapshot:
        """A task waiting for input: the extension lists its questions (answered as a server's
        questions are, then `tasks/update`); a utility server asks them during `tasks/result`."""
        server_id = snapshot["taskId"]
        if how == "utility":
            snapshot.update(await task_calls.payload(downstream, server_id, downstream.settings.task_timeout))
            if "result" in snapshot or "error" in snapshot:
                snapshot["status"] = "completed" if "result" in snapshot else "failed"
            return snapshot
        questions: dict[str, types.InputRequest] = {}
        for key, request in (snapshot.get("inputRequests") or {}).items():
            try:
                questions[key] = _INPUT_REQUEST.validate_python(request, by_name=False)
            except ValidationError:
                continue
        # One round, as a server's questions on a call are (`answer_round`: all at once, its keys).
        replies = await self.asks.answer_round(caller, questions)
        answers = {k: reply.model_dump(mode="json", by_alias=True, exclude_none=True) for k, reply in replies.items()}
        await task_calls.update(downstream, server_id, answers)
        return snapshot

    async def _pause(self, server: str, server_id: str, interval_ms: Any) -> None:
        """Until the next poll (the server's interval), or until the server announces a status."""
        interval = interval_ms / 1000 if isinstance(interval_ms, int | float) and interval_ms > 0 else DEFAULT_POLL
        event = self._heard.setdefault((server, server_id), asyncio.Event())
        try:
            with anyio.move_on_after(min(interval, MAX_POLL)):
                await event.wait()
        finally:
            self._heard.pop((server, server_id), None)

    async def _cancel_quietly(self, downstream: Downstream, server_id: str) -> None:
        with anyio.move_on_after(CANCEL_WAIT):
            try:
                await task_calls.cancel(downstream, server_id)
            except Exception as exc:  # it may have ended, or its server gone: nothing more to do
                downstream.log.note(f"cancelling task {server_id} failed: {exc}")

    # Our ids --------------------------------------------------------------------------------------

    def _keep(self, server: str, server_id: str, how: Flavour, tool: str, caller: Caller, ttl_ms: Any) -> str:
        """Our id for a server's task, kept while the server keeps the task (its ttl, a minute more)."""
        now = time.monotonic()
        for ours in [o for o, t in self._tasks.items() if t.expires < now][:100]:
            self._forget(ours)
        while len(self._tasks) >= MAX_KEPT:
            self._forget(next(iter(self._tasks)))
        ours = secrets.token_urlsafe(18)
        modern = caller.modern
        session = None if modern else caller.ctx.session
        owner = None if modern else caller.key
        kept = ttl_ms / 1000 + 60 if isinstance(ttl_ms, int) and ttl_ms > 0 else KEPT_WITHOUT_TTL
        self._tasks[ours] = _Task(server, server_id, how, tool, owner, session, now + kept)
        self._ours[(server, server_id)] = ours
        return ours

    def _forget(self, ours: str) -> None:
        self._watchers.pop(ours, None)
        task = self._tasks.pop(ours, None)
        if task is not None:
            self._ours.pop((task.server, task.server_id), None)

    def _client_gone(self, key: int) -> None:
        """A handshake-era client left: its tasks run on, but nobody hears their news."""
        for task in self._tasks.values():
            if task.owner == key:
                task.session = None

    def known(self) -> int:
        return len(self._tasks)

    async def heard(self, server: str, snapshot: Snapshot) -> None:
        """A server announced a task's status: wake the run waiting on it, tell the client that owns it."""
        server_id = snapshot.get("taskId")
        if not isinstance(server_id, str):
            return
        event = self._heard.get((server, server_id))
        if event is not None:
            event.set()
        ours = self._ours.get((server, server_id))
        task = self._tasks.get(ours) if ours is not None else None
        if ours is None or task is None:
            return
        if task.session is not None:
            await _tell_connection(task.session, for_client(snapshot, ours, modern=False))
        if self._watchers.get(ours):
            await self._tell_listeners(ours, task, snapshot)

    async def _tell_listeners(self, ours: str, task: _Task, snapshot: Snapshot) -> None:
        """`notifications/tasks` carries the task as `tasks/get` would answer it: a utility server's
        ended task with its result or error, which its announcement lacks (read from `tasks/result`)."""
        detailed = dict(snapshot)
        downstream = self.servers.get(task.server)
        if task.how == "utility" and detailed.get("status") in ("completed", "failed") and downstream is not None:
            try:
                detailed.update(await task_calls.payload(downstream, task.server_id))
            except Exception as exc:  # no result to give: the client reads it with tasks/get
                logger.debug("task %s: its result for a listener could not be read: %s", task.server_id, exc)
                return
        fields = for_client(detailed, ours, modern=True)
        for deliver in list(self._watchers.get(ours, {}).values()):
            deliver(fields)

    def watch(
        self, ctx: ServerRequestContext[Any, Any], task_ids: list[str], deliver: Deliver
    ) -> tuple[list[str], Callable[[], None]]:
        """A 2026-07-28 listen stream that names tasks (`taskIds`): the ones it will hear of, and how
        to stop. Those are the tasks mcpmanager gave a 2026-07-28 client (their unguessable ids are
        the key: such a client has no connection to own them by) on a server that announces statuses,
        the 2025-11-25 utility's. A 2026-07-28 server announces them only on a listen stream of its
        own, which mcpmanager does not open: those tasks are polled, and not acknowledged."""
        if not tasks_wanted(ctx).takes:
            raise MCPError(
                types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Task notifications need the {EXTENSION} extension declared.",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        token = object()
        watched: list[str] = []
        for ours in dict.fromkeys(task_ids):
            task = self._tasks.get(ours)
            if task is None or task.owner is not None or task.how != "utility":
                continue
            self._watchers.setdefault(ours, {})[token] = deliver
            watched.append(ours)

        def unwatch() -> None:
            for ours in watched:
                following = self._watchers.get(ours)
                if following is not None:
                    following.pop(token, None)
                    if not following:
                        del self._watchers[ours]

        return watched, unwatch

    # The tasks/* requests -------------------------------------------------------------------------

    def _task(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> tuple[_Task, Downstream]:
        check_named(ctx, task_id)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and not tasks_wanted(ctx).takes:
            raise MCPError(
                types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"This request did not declare the {EXTENSION} extension.",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        task = self._tasks.get(task_id)
        if task is None or (task.owner is not None and task.owner != self.connections.key(ctx.session)):
            raise MCPError(types.INVALID_PARAMS, f"Unknown task '{task_id}'.")
        downstream = self.servers.get(task.server)
        if downstream is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task '{task_id}': its server is not configured any more.")
        return task, downstream

    async def _on_get(self, ctx: ServerRequestContext[Any, Any], params: _TaskParams) -> dict[str, Any]:
        task, downstream = self._task(ctx, params.task_id)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        snapshot = await _guarded(downstream, task_calls.get(downstream, task.how, task.server_id, inline=modern))
        return for_client(snapshot, params.task_id, modern)

    async def _on_result(self, ctx: ServerRequestContext[Any, Any], params: _TaskParams) -> dict[str, Any]:
        """The 2025-11-25 utility's `tasks/result`: wait for the task to end, then its result."""
        _handshake_only(ctx)
        task, downstream = self._task(ctx, params.task_id)
        with self.callers.working_for(task.server, ctx) as caller:  # a question it asks meanwhile is this client's
            snapshot = await _guarded(downstream, task_calls.get(downstream, task.how, task.server_id))
            with anyio.move_on_after(downstream.settings.task_timeout) as waited:
                while snapshot.get("status") not in TERMINAL:
                    if snapshot.get("status") == "input_required":
                        snapshot = await _guarded(downstream, self._give_input(caller, downstream, task.how, snapshot))
                        if snapshot.get("status") in TERMINAL:
                            break
                    else:
                        await self._pause(task.server, task.server_id, snapshot.get("pollIntervalMs"))
                    snapshot = await _guarded(downstream, task_calls.get(downstream, task.how, task.server_id))
        if waited.cancelled_caught:
            bound = downstream.settings.task_timeout
            raise MCPError(types.REQUEST_TIMEOUT, f"Task '{params.task_id}' did not end within {bound:g} s.")
        if isinstance(snapshot.get("result"), dict):
            result: dict[str, Any] = dict(snapshot["result"])
            result["_meta"] = {**(result.get("_meta") or {}), task_calls.RELATED_TASK: {"taskId": params.task_id}}
            return result
        if isinstance(snapshot.get("error"), dict):
            raise MCPError.from_error_data(types.ErrorData.model_validate(snapshot["error"]))
        raise MCPError(types.INVALID_PARAMS, f"Task '{params.task_id}' was {snapshot.get('status')}: it has no result.")

    async def _on_list(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        """The 2025-11-25 utility's `tasks/list`: this connection's tasks, as their servers see them now."""
        _handshake_only(ctx)
        key = self.connections.key(ctx.session)
        listed: list[dict[str, Any]] = []
        for ours, task in list(self._tasks.items()):
            downstream = self.servers.get(task.server)
            if task.owner != key or downstream is None:
                continue
            try:
                snapshot = await task_calls.get(downstream, task.how, task.server_id, inline=False)
            except (MCPError, Unavailable):
                continue  # gone from its server (expired) or the server is down: not listed
            listed.append(for_client(snapshot, ours, modern=False))
        return {"tasks": listed}

    async def _on_cancel(self, ctx: ServerRequestContext[Any, Any], params: _TaskParams) -> dict[str, Any]:
        task, downstream = self._task(ctx, params.task_id)
        answer = await _guarded(downstream, task_calls.cancel(downstream, task.server_id))
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return {}  # the extension's ack; the status is read with tasks/get
        if task.how == "utility":
            return for_client(task_calls.from_utility(answer), params.task_id, modern=False)
        snapshot = await _guarded(downstream, task_calls.get(downstream, task.how, task.server_id, inline=False))
        return for_client(snapshot, params.task_id, modern=False)

    async def _on_update(self, ctx: ServerRequestContext[Any, Any], params: _UpdateParams) -> dict[str, Any]:
        """The extension's `tasks/update`: a client's answers to its task's questions."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found", "tasks/update")
        task, downstream = self._task(ctx, params.task_id)
        if task.how != "extension":
            raise MCPError(
                types.INVALID_PARAMS,
                f"Server '{task.server}' speaks the 2025-11-25 tasks utility: it asks its questions itself.",
            )
        await _guarded(downstream, task_calls.update(downstream, task.server_id, params.input_responses or {}))
        return {}


async def _tell_connection(session: ServerSession, fields: dict[str, Any]) -> None:
    """The utility's `notifications/tasks/status`, on a handshake-era client's connection."""
    try:
        params = types.TaskStatusNotificationParams.model_validate(fields, by_name=False)
        await session.send_notification(cast(Any, types.TaskStatusNotification(params=params)))
    except Exception as exc:  # a gone client, or a status no client could read
        logger.debug("task status not passed on: %s", exc)


def _request(ctx: ServerRequestContext[Any, Any]) -> tuple[int, Any]:
    """One request in flight: its connection and id (a middleware may hand on a copy of its context)."""
    return id(ctx.session), ctx.request_id


def _handshake_only(ctx: ServerRequestContext[Any, Any]) -> None:
    """`tasks/result` and `tasks/list` are the 2025-11-25 utility's: the extension removed them."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", ctx.method)


async def _guarded(downstream: Downstream, request: Awaitable[Any]) -> Any:
    """A server's own error passes on with its code; its being down is said in mcpmanager's words."""
    try:
        return await request
    except MCPError:
        raise
    except Unavailable as exc:
        raise MCPError(types.INTERNAL_ERROR, str(exc)) from None
    except Exception as exc:  # boundary: a broken connection reads as the server's trouble
        logger.debug("%s: task request failed", downstream.name, exc_info=True)
        raise MCPError(types.INTERNAL_ERROR, f"Server '{downstream.name}' failed: {type(exc).__name__}") from None
