"""Tasks on one server, in whichever flavour it speaks: the 2026-07-28 tasks extension (SEP-2663,
`io.modelcontextprotocol/tasks` in its `extensions`) or the 2025-11-25 tasks utility (its `tasks`
capability). The SDK's client has no methods for either, so each request is sent raw through the
server's session (`sdk_compat.send_raw`), bounded by `callTimeout` like any other request: a task
lives longer than any one of them.

Whatever the flavour, a task's state comes back in one shape, the extension's (`Snapshot`): `taskId`
(the server's), `status`, `statusMessage`, `createdAt`, `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`,
and once it ends `result` (completed) or `error` (failed); `inputRequests` while it waits for input.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import mcp_types as types
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.shared.exceptions import MCPError
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpmanager.core.sdk_compat import send_raw
from mcpmanager.core.supervisor.tool_calls import ProgressCallback, ToolCalls, Unavailable, shapeless
from mcpmanager.core.tool_results import error_result

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})

Flavour = Literal["extension", "utility"]
Snapshot = dict[str, Any]
# What starting a call as a task gave: ("task", its snapshot) or ("result", the server's plain result).
Started = tuple[Literal["task", "result"], dict[str, Any]]

_TASK_FIELDS = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt")


def flavour(server: ToolCalls, declared: types.ServerCapabilities | None) -> Flavour | None:
    """The tasks flavour the server speaks for tools/call, or None."""
    if declared is None:
        return None
    if server.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "extension" if EXTENSION in (declared.extensions or {}) else None
    tasks = declared.tasks
    if tasks is not None and tasks.requests is not None and tasks.requests.tools is not None:
        return "utility" if tasks.requests.tools.call is not None else None
    return None


def may_be_task(spec: Mapping[str, Any], server: ToolCalls, declared: types.ServerCapabilities | None) -> bool:
    """Whether a call of this tool may be answered with a task: the tool says it may (the utility's
    `execution.taskSupport`), or its server speaks the extension and the tool does not say no (the
    2026-07-28 tool has no `execution`: such a server decides per call)."""
    how = flavour(server, declared)
    if how == "utility":
        return task_support(spec) != "forbidden"
    if how == "extension":
        execution = spec.get("execution")
        return not (isinstance(execution, Mapping) and execution.get("taskSupport") == "forbidden")
    return False


def task_support(spec: Mapping[str, Any]) -> str:
    """A tool's `execution.taskSupport` ("forbidden" when absent)."""
    execution = spec.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if support in ("required", "optional") else "forbidden"


class TaskStatusBinding(ClientExtension):
    """Hears a 2025-11-25 server's `notifications/tasks/status` (the SDK's core tables leave it out;
    its extension bindings are the public way in). `heard` is the Downstream's."""

    identifier = EXTENSION

    def __init__(self, heard: Callable[[Snapshot], Awaitable[None]]) -> None:
        self._heard = heard

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=types.TaskStatusNotificationParams,
                handler=self._on_status,
            )
        ]

    async def _on_status(self, params: types.TaskStatusNotificationParams) -> None:
        await self._heard(from_utility(params.model_dump(mode="json", by_alias=True, exclude_none=True)))


async def start(
    server: ToolCalls,
    how: Flavour,
    name: str,
    arguments: dict[str, Any] | None,
    as_task: bool,
    ttl_ms: int | None,
    answers: types.InputResponses | None = None,
    state: str | None = None,
    progress: ProgressCallback | None = None,
) -> Started:
    """Call a tool so that the server may answer with a task: the extension's servers decide for
    themselves once the request declares the extension; a utility server makes one when `as_task`
    (the request carries `task`). Raises `MCPError`/`TimeoutError` as the session does."""
    client = await server.ready_client()
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if answers is not None:  # a retry with a client's answers (a 2026-07-28 server asked first)
        params["inputResponses"] = {
            k: v.model_dump(mode="json", by_alias=True, exclude_none=True) for k, v in answers.items()
        }
    if state is not None:
        params["requestState"] = state
    timeout = server.settings.call_timeout
    if how == "extension":
        raw = await send_raw(client, "tools/call", params, timeout, {EXTENSION: {}}, name, progress)
        if raw.get("resultType") == "task" and isinstance(raw.get("taskId"), str):
            return "task", from_extension(raw)
        return "result", raw
    if as_task:
        params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
    raw = await send_raw(client, "tools/call", params, timeout, progress=progress)
    task = raw.get("task")
    if isinstance(task, dict) and isinstance(task.get("taskId"), str):
        return "task", from_utility(task)
    return "result", raw


async def start_call(
    server: ToolCalls,
    how: Flavour,
    name: str,
    arguments: dict[str, Any] | None,
    as_task: bool,
    ttl_ms: int | None,
    answers: types.InputResponses | None = None,
    state: str | None = None,
    progress: ProgressCallback | None = None,
) -> Snapshot | types.CallToolResult | types.InputRequiredResult:
    """`start`, with a plain answer typed as `call_tool` types it and failures in its words: the
    task's snapshot, the result, a 2026-07-28 server's question, or an isError result saying why."""
    try:
        kind, raw = await start(server, how, name, arguments, as_task, ttl_ms, answers, state, progress)
    except Unavailable as exc:
        return error_result(str(exc))
    except MCPError as exc:
        return await server.refused(name, exc)
    except TimeoutError:
        return server.too_slow(name)
    except Exception as exc:  # the connection broke under the call
        return await server.cut_off(name, exc)
    if kind == "task":
        return raw
    try:
        if is_input_required(raw):
            return types.InputRequiredResult.model_validate(raw, by_name=False)
        return types.CallToolResult.model_validate(without_server_info(raw), by_name=False)
    except ValidationError:
        return shapeless(server.name, name)


async def get(server: ToolCalls, how: Flavour, task_id: str, inline: bool = True) -> Snapshot:
    """The task's state; `inline`: a utility server's ended task with its result or error fetched
    (`tasks/result`), as the extension inlines them."""
    client = await server.ready_client()
    timeout = server.settings.call_timeout
    raw = await send_raw(client, "tasks/get", {"taskId": task_id}, timeout, name=task_id)
    if how == "extension":
        return from_extension(raw)
    snapshot = from_utility(raw)
    if inline and snapshot["status"] in ("completed", "failed"):
        snapshot.update(await payload(server, task_id))
    return snapshot


async def payload(server: ToolCalls, task_id: str, timeout: float | None = None) -> dict[str, Any]:
    """A utility server's `tasks/result` as the extension inlines it: {"result": …} or {"error": …}.
    It blocks until the task ends (and is how such a server asks its questions): `timeout` bounds it."""
    client = await server.ready_client()
    bound = server.settings.call_timeout if timeout is None else timeout
    try:
        raw = await send_raw(client, "tasks/result", {"taskId": task_id}, bound, name=task_id)
    except MCPError as exc:
        if exc.error.code in (types.REQUEST_TIMEOUT, types.CONNECTION_CLOSED):
            raise
        return {"error": exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)}
    return {"result": without_related_task(raw)}


async def cancel(server: ToolCalls, task_id: str) -> dict[str, Any]:
    """`tasks/cancel` (both flavours name it so); the server's raw answer."""
    client = await server.ready_client()
    return await send_raw(client, "tasks/cancel", {"taskId": task_id}, server.settings.call_timeout, name=task_id)


async def update(server: ToolCalls, task_id: str, responses: Mapping[str, Any]) -> dict[str, Any]:
    """`tasks/update` (the extension's: answers to a task's `inputRequests`)."""
    client = await server.ready_client()
    params = {"taskId": task_id, "inputResponses": dict(responses)}
    return await send_raw(client, "tasks/update", params, server.settings.call_timeout, name=task_id)


def from_extension(raw: Mapping[str, Any]) -> Snapshot:
    return {k: v for k, v in raw.items() if k not in ("resultType", "_meta")}


def from_utility(raw: Mapping[str, Any]) -> Snapshot:
    snapshot: Snapshot = {k: raw[k] for k in _TASK_FIELDS if k in raw}
    snapshot["ttlMs"] = raw.get("ttl")
    if raw.get("pollInterval") is not None:
        snapshot["pollIntervalMs"] = raw["pollInterval"]
    return snapshot


def without_related_task(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result without the utility's related-task `_meta` (the task's id is the server's)."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or RELATED_TASK not in meta:
        return dict(result)
    rest = {k: v for k, v in meta.items() if k != RELATED_TASK}
    return {**{k: v for k, v in result.items() if k != "_meta"}, **({"_meta": rest} if rest else {})}


def without_server_info(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result without the server's identity stamp: the client talks to mcpmanager, which stamps its own."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or types.SERVER_INFO_META_KEY not in meta:
        return dict(result)
    rest = {k: v for k, v in meta.items() if k != types.SERVER_INFO_META_KEY}
    return {**{k: v for k, v in result.items() if k != "_meta"}, **({"_meta": rest} if rest else {})}
