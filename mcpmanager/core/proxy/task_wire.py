"""Tasks as each kind of client reads them: whether a tools/call takes a task, and a task's state
written in the client's flavour (the 2026-07-28 extension's flat shape, or the 2025-11-25
utility's `task` with `ttl` and `pollInterval`) under mcpmanager's own id for it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpmanager.core.supervisor.task_calls import EXTENSION, Snapshot, without_server_info
from mcpmanager.core.supervisor.tool_calls import shapeless
from mcpmanager.core.tool_results import error_result

_STATE = ("status", "statusMessage", "createdAt", "lastUpdatedAt")


@dataclass
class Wanted:
    """What one client's request says about tasks, and the task made for it, if one was."""

    takes: bool  # the client takes a task for an answer
    modern: bool  # a 2026-07-28 client (the extension's shapes), else the 2025-11-25 utility's
    ttl_ms: int | None = None  # the ttl a handshake-era client asked for
    created: dict[str, Any] | None = None  # the task made for it, written for it


def tasks_wanted(ctx: ServerRequestContext[Any, Any]) -> Wanted:
    """A 2026-07-28 request takes tasks when its envelope declares the extension; a handshake-era
    tools/call when it carries `task` (the utility's request for one)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        declared = ctx.session.client_capabilities
        extensions = dict(declared.extensions or {}) if declared is not None else {}
        envelope = (ctx.meta or {}).get(types.CLIENT_CAPABILITIES_META_KEY)
        if isinstance(envelope, Mapping) and isinstance(envelope.get("extensions"), Mapping):
            extensions.update(envelope["extensions"])
        return Wanted(EXTENSION in extensions, True)
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    task = params.get("task")
    if not isinstance(task, Mapping):
        return Wanted(False, False)
    ttl = task.get("ttl")
    return Wanted(True, False, ttl if type(ttl) is int and ttl > 0 else None)


def check_named(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """A 2026-07-28 `tasks/*` over HTTP whose `Mcp-Name` names another task is refused (SEP-2243's
    -32020, which the SDK answers with HTTP 400), as the SDK refuses a tools/call whose header
    names another tool; the SDK's ladder knows only tools/call, prompts/get and resources/read.
    A request without the header passes: the SDK's own client does not mirror a task id."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return
    headers = getattr(ctx.request, "headers", None)
    named = headers.get(MCP_NAME_HEADER) if isinstance(headers, Mapping) else None
    if named is not None and decode_header_value(named) != task_id:
        raise MCPError(types.HEADER_MISMATCH, "Mcp-Name header does not match the request body's 'taskId' parameter")


def for_client(snapshot: Snapshot, ours: str, modern: bool, created: bool = False) -> dict[str, Any]:
    """A task's state under our id `ours`, in the client's flavour. `created`: the answer to the
    tools/call that made it (the extension's carries no result; the utility's wraps it in `task`)."""
    if modern:
        answer: dict[str, Any] = {"taskId": ours}
        answer.update({k: snapshot[k] for k in _STATE if k in snapshot})
        answer["ttlMs"] = snapshot.get("ttlMs")
        if snapshot.get("pollIntervalMs") is not None:
            answer["pollIntervalMs"] = snapshot["pollIntervalMs"]
        if created:
            return {**answer, "resultType": "task"}
        for key in ("result", "error", "inputRequests"):
            if snapshot.get(key) is not None:
                answer[key] = without_server_info(snapshot[key]) if key == "result" else snapshot[key]
        return answer
    task: dict[str, Any] = {"taskId": ours}
    task.update({k: snapshot[k] for k in _STATE if k in snapshot})
    task["ttl"] = snapshot.get("ttlMs")
    if snapshot.get("pollIntervalMs") is not None:
        task["pollInterval"] = snapshot["pollIntervalMs"]
    return {"task": task} if created else task


def created_answer(wanted: Wanted, answer: Any) -> dict[str, Any]:
    """The tools/call's answer once a task was made for it: the task, with the envelope's stamp
    the SDK put on the answer it replaces (a 2026-07-28 result's serverInfo)."""
    created = dict(wanted.created or {})
    meta = answer.get("_meta") if isinstance(answer, Mapping) else None
    if wanted.modern and isinstance(meta, Mapping) and types.SERVER_INFO_META_KEY in meta:
        created["_meta"] = {types.SERVER_INFO_META_KEY: meta[types.SERVER_INFO_META_KEY]}
    return created


def final_result(server: str, tool: str, snapshot: Snapshot) -> types.CallToolResult:
    """What an ended task comes to for a client that never saw it."""
    status = snapshot.get("status")
    result = snapshot.get("result")
    if isinstance(result, dict):
        try:
            return types.CallToolResult.model_validate(without_server_info(result), by_name=False)
        except ValidationError:
            return shapeless(server, tool)
    error = snapshot.get("error")
    if isinstance(error, Mapping):
        message = error.get("message")
        return error_result(f"Server '{server}' failed the task for '{tool}': {message}")
    if status == "cancelled":
        return error_result(f"Server '{server}' cancelled the task for '{tool}'.")
    return error_result(f"Server '{server}' ended the task for '{tool}' ({status}) with no result.")
