"""A server whose long tools run as tasks, in both flavours: the 2026-07-28 tasks extension to a
2026-07-28 client (flat `resultType: "task"`, results inlined on `tasks/get`) and the 2025-11-25
tasks utility to a handshake-era one (`task` on tools/call, `tasks/result`, `tasks/list`, status
notifications). Written with the SDK's low-level `Server`; tools/call of a task tool is answered by
a middleware, since the SDK's result sieve knows no task result.

    python -m tests.helpers.task_server                 # stdio
    python -m tests.helpers.task_server --http PORT     # Streamable HTTP on 127.0.0.1:PORT/mcp
    python -m tests.helpers.task_server --handshake-only  # stdio, refusing server/discover: the utility only

Tools: `slow_job` (taskSupport "required": sleeps `seconds`, then says `done <label>`),
`failing_job` (required: a tool error after `seconds`), `optional_job` (optional: a task when the
client takes one, else run in the call), `greet` (no tasks), and `slow_compute` (optional) and
`protocol_error_job` (required: the task fails with a protocol error) for the conformance suite.
Two ask for input, over the extension only (2026-07-28): `asks_first` (required) answers an
`InputRequiredResult` for `user_name` (its `requestState` "asked-once") and, on the retry with the
answer, makes a task that greets the name; `delete_job` (required, and named so that mcpmanager asks
before it) makes a task that waits for `confirm` (`input_required`, its question in `inputRequests`,
answered with `tasks/update`), then says `deleted <label>` or `kept <label>`.
A task's id is `task-<label>` (else `task-1`, `task-2`, …), so two such servers given one label
hand out the same id. What happens to each task is appended to the file `TASK_SERVER_LOG` names,
one JSON object a line (`created`, `cancelled`, `finished`)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import anyio
import mcp_types as types
import uvicorn
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
TTL_MS = 600_000
POLL_MS = 200
SECONDS = {"type": "object", "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}}}
TOOLS = [
    types.Tool(name="slow_job", description="Sleeps, as a task.", input_schema=SECONDS),
    types.Tool(name="failing_job", description="Fails, as a task.", input_schema=SECONDS),
    types.Tool(name="optional_job", description="Sleeps, as a task if asked.", input_schema=SECONDS),
    types.Tool(name="greet", description="Says hello.", input_schema={"type": "object"}),
    # Under the names the conformance suite's tasks scenarios call.
    types.Tool(name="slow_compute", description="Sleeps, as a task if asked.", input_schema=SECONDS),
    types.Tool(name="protocol_error_job", description="Fails with a protocol error, as a task.", input_schema=SECONDS),
    types.Tool(name="asks_first", description="Asks a name, then greets from a task.", input_schema=SECONDS),
    types.Tool(name="delete_job", description="Asks for a confirmation, as a task.", input_schema=SECONDS),
]
ASKS = ("asks_first", "delete_job")  # the extension's only: they ask as 2026-07-28 servers do
STATE = "asked-once"  # asks_first's requestState, checked on the retry (it must come back untouched)
SUPPORT = {
    "slow_job": "required",
    "failing_job": "required",
    "optional_job": "optional",
    "slow_compute": "optional",
    "protocol_error_job": "required",
    "asks_first": "required",
    "delete_job": "required",
}


def question(message: str, field: str, kind: str) -> dict[str, Any]:
    """An elicitation for one field, as an `inputRequests` entry."""
    schema: Any = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


def answered(responses: Any, key: str, field: str) -> Any:
    """The `field` of an accepted answer to question `key`, or None."""
    response = responses.get(key) if isinstance(responses, dict) else None
    if isinstance(response, dict) and response.get("action") == "accept":
        return (response.get("content") or {}).get(field)
    return None


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def record(event: str, **fields: Any) -> None:
    path = os.environ.get("TASK_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")


@dataclass
class Job:
    task_id: str
    tool: str
    label: str
    status: str = "working"
    created: str = field(default_factory=now)
    updated: str = field(default_factory=now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[None] | None = None
    session: ServerSession | None = None  # a handshake-era client's, told of status changes
    asking: dict[str, Any] = field(default_factory=dict)  # its open questions (`input_required`)
    answers: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)  # from tasks/update
    greet: str | None = None  # asks_first's name, gathered before the task was made

    def task(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": f"{self.tool} {self.status}",
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttl": TTL_MS,
            "pollInterval": POLL_MS,
        }

    def flat(self) -> dict[str, Any]:
        """The extension's shape (`ttlMs`, `pollIntervalMs`; the result inlined once completed)."""
        fields = self.task()
        flat = {k: v for k, v in fields.items() if k not in ("ttl", "pollInterval")}
        flat.update(ttlMs=TTL_MS, pollIntervalMs=POLL_MS)
        if self.status == "completed" and self.result is not None:
            flat["result"] = self.result
        if self.status == "failed" and self.error is not None:
            flat["error"] = self.error
        if self.status == "input_required":
            flat["inputRequests"] = self.asking
        return flat


def text(message: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": error}


class TaskServer:
    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.serial = 0

    async def run(self, job: Job, seconds: float) -> None:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            return
        if job.tool == "delete_job":
            job.asking, job.status, job.updated = (
                {"confirm": question(f"Delete {job.label}?", "confirm", "boolean")},
                "input_required",
                now(),
            )
            responses = await job.answers.get()
            job.asking, job.status = {}, "working"
            verb = "deleted" if answered(responses, "confirm", "confirm") is True else "kept"
            job.result = text(f"{verb} {job.label}")
        elif job.greet is not None:
            job.result = text(f"Hello, {job.greet}! (from a task)")
        elif job.tool == "failing_job":
            job.result = text(f"{job.label} failed on purpose", error=True)
        elif job.tool == "protocol_error_job":
            job.error = {"code": types.INTERNAL_ERROR, "message": f"{job.label} broke on purpose"}
            await self.settle(job, "failed")
            return
        else:
            job.result = text(f"done {job.label} after {seconds:g} s")
        await self.settle(job, "completed")

    async def settle(self, job: Job, status: str) -> None:
        job.status, job.updated = status, now()
        job.done.set()
        record("finished" if status == "completed" else status, taskId=job.task_id, label=job.label)
        if job.session is not None:
            params = types.TaskStatusNotificationParams.model_validate(job.task(), by_name=False)
            try:
                await job.session.send_notification(cast(Any, types.TaskStatusNotification(params=params)))
            except Exception:  # the client left
                job.session = None

    def job(self, task_id: str) -> Job:
        job = self.jobs.get(task_id)
        if job is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task {task_id}")
        return job

    # tools/call -----------------------------------------------------------------------------------

    async def calls(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = dict(ctx.params or {})
        name = params.get("name")
        support = SUPPORT.get(str(name))
        if support is None:
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        seconds = float(arguments.get("seconds", 1))
        label = str(arguments.get("label", name))
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern:
            declared = cast(dict[str, Any], (ctx.meta or {}).get(types.CLIENT_CAPABILITIES_META_KEY) or {})
            takes = EXTENSION in (declared.get("extensions") or {})
        else:
            takes = isinstance(params.get("task"), dict)
        greet = None
        if name in ASKS and not modern:
            raise MCPError(types.METHOD_NOT_FOUND, f"{name} asks as a 2026-07-28 server does: not over this era")
        if name == "asks_first" and takes:
            greet = answered(params.get("inputResponses"), "user_name", "name")
            if greet is None or params.get("requestState") != STATE:
                asked = {"user_name": question("What is your name?", "name", "string")}
                return {"resultType": "input_required", "inputRequests": asked, "requestState": STATE}
        if not takes:
            if support == "required" and modern:
                raise MCPError(
                    types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"{name} runs only as a task",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
            if support == "required":
                raise MCPError(types.METHOD_NOT_FOUND, f"{name} must be called as a task")
            await asyncio.sleep(seconds)
            return {"content": [{"type": "text", "text": f"done {label} after {seconds:g} s (no task)"}]}
        self.serial += 1
        task_id = f"task-{label}" if "label" in arguments else f"task-{self.serial}"
        job = Job(task_id, str(name), label, session=None if modern else ctx.session, greet=greet)
        self.jobs[job.task_id] = job
        job.runner = asyncio.get_running_loop().create_task(self.run(job, seconds))
        record("created", taskId=job.task_id, label=label, modern=modern)
        if modern:
            return {**{k: v for k, v in job.flat().items() if k != "result"}, "resultType": "task"}
        return {"task": job.task()}

    async def on_call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        name = (params.arguments or {}).get("name", "you")
        return types.CallToolResult(content=[types.TextContent(text=f"Hello, {name}!")])

    async def on_list_tools(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        tools = []
        for tool in TOOLS:
            support = SUPPORT.get(tool.name)
            if support is not None:
                tool = tool.model_copy(update={"execution": types.ToolExecution(task_support=support)})  # type: ignore[arg-type]
            tools.append(tool)
        return types.ListToolsResult(tools=tools)

    # tasks/* --------------------------------------------------------------------------------------

    async def get(self, ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        job = self.job(params.task_id)
        return job.flat() if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else job.task()

    async def result(self, ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        job = self.job(params.task_id)
        await job.done.wait()
        if job.error is not None:
            raise MCPError(job.error["code"], job.error["message"])
        if job.result is None:
            raise MCPError(types.INVALID_PARAMS, f"task {job.task_id} was {job.status}")
        return {**job.result, "_meta": {RELATED: {"taskId": job.task_id}}}

    async def listing(self, ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        return {"tasks": [job.task() for job in self.jobs.values()]}

    async def cancel(self, ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        job = self.job(params.task_id)
        if job.status not in ("completed", "failed", "cancelled"):
            if job.runner is not None:
                job.runner.cancel()
            await self.settle(job, "cancelled")
        return {} if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else job.task()

    async def update(self, ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        """The extension's `tasks/update`: answers to the task's open questions."""
        job = self.job(params.task_id)
        if job.status == "input_required":
            job.answers.put_nowait(dict(params.input_responses or {}))
        return {}

    def build(self) -> Server[Any]:
        server = _Advertising("task-server", on_list_tools=self.on_list_tools, on_call_tool=self.on_call_tool)
        server.middleware.insert(0, self.calls)

        server.add_request_handler("tasks/get", TaskParams, self.get)
        server.add_request_handler("tasks/result", TaskParams, self.result)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self.listing)
        server.add_request_handler("tasks/cancel", TaskParams, self.cancel)
        server.add_request_handler("tasks/update", UpdateParams, self.update)
        return server


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] | None = None


class _Advertising(Server[Any]):
    """Declares both flavours: `tasks` (kept by the handshake era's sieve) and the extension."""

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        tasks = types.ServerTasksCapability(
            list=types.TasksListCapability(),
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            ),
        )
        return capabilities.model_copy(update={"tasks": tasks, "extensions": {EXTENSION: {}}})


async def serve_stdio(server: Server[Any], handshake_only: bool) -> None:
    async with stdio_server() as (read, write):
        options = server.create_initialization_options(NotificationOptions())
        if not handshake_only:
            await server.run(read, write, options)
            return
        async with server.lifespan(server) as state:  # the probe refused, as by a server built before it
            await serve_loop(server, read, write, lifespan_state=state, init_options=options)


async def serve_http(server: Server[Any], port: int) -> None:
    app = server.streamable_http_app(host="127.0.0.1")
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    await http.serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--handshake-only", action="store_true", help="refuse server/discover (an older server)")
    args = parser.parse_args()
    server = TaskServer().build()
    if args.http is None:
        anyio.run(serve_stdio, server, args.handshake_only)
    else:
        anyio.run(serve_http, server, args.http)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends
