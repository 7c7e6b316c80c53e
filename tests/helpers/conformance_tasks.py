"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as the conformance fixture serves it.

The SDK has the extension's hooks (`Server.extensions`, `Server.middleware`, custom request
methods, extension `resultType`s passing its result sieve) but no tasks, so they are written here:

- `tools/call` of a task tool from a client that declared the extension (in its capabilities, or
  for this one request in `_meta`) answers a flat `CreateTaskResult` (`resultType: "task"`,
  `taskId`, `status`, timestamps, `ttlMs`, `pollIntervalMs`) and runs the tool in the background;
  without the extension an optional task tool runs inline (a job longer than `INLINE_LIMIT_S` is
  refused with a tool error instead: a client that cannot poll is not kept waiting a minute, and a
  proxy that drops the extension fails the suite's check at once rather than at its timeout), a
  required one is refused with -32021.
- `tasks/get` answers the task (`resultType: "complete"`) with its tool result inlined once
  completed, its JSON-RPC error once failed, and the questions still open (`inputRequests`) while
  it waits for the client; `tasks/update` delivers answers (any subset), `tasks/cancel` cancels;
  both ack with an empty result. An unknown id is -32602; `tasks/result` and `tasks/list` (v1)
  are not served (-32601). Over HTTP, `Mcp-Name` must name the task (-32020 otherwise).

The tools are the ones the scenarios call: `greet` (never a task), `slow_compute`, `failing_job`
(a tool error: completed with isError), `protocol_error_job` (failed), `confirm_delete` and
`multi_input` (they wait for answers), `test_tool_with_task` (asks by InputRequiredResult first,
then becomes a task). Tasks live in memory for `TTL_MS` and die with the process.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from tests.helpers.conformance_rounds import elicit
from tests.helpers.conformance_rounds import field as answered
from tests.helpers.conformance_tables import EMPTY_OBJECT, string_schema, text

TASKS = "io.modelcontextprotocol/tasks"
TTL_MS = 600_000
INLINE_LIMIT_S = 5.0
POLL_MS = 100
Ctx = ServerRequestContext[Any]
Args = dict[str, Any]
Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL = ("completed", "failed", "cancelled")
_RESPONSE: TypeAdapter[types.InputResponse] = TypeAdapter(types.InputResponse)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


@dataclass
class Task:
    id: str
    status: Status = "working"
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: types.InputRequests = field(default_factory=dict)
    answers: types.InputResponses = field(default_factory=dict)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _answered: anyio.Event = field(default_factory=anyio.Event)

    def settle(self, status: Status, **outcome: dict[str, Any]) -> None:
        if self.status not in TERMINAL:  # a cancelled task stays cancelled
            self.status, self.updated = status, _now()
            self.result, self.error = outcome.get("result"), outcome.get("error")

    async def ask(self, requests: types.InputRequests) -> types.InputResponses:
        """Park the task as input_required until every question is answered (tasks/update)."""
        self.pending, self.answers = dict(requests), {}
        self.status, self.updated = "input_required", _now()
        while self.pending:
            await self._answered.wait()
            self._answered = anyio.Event()
        self.status, self.updated = "working", _now()
        return self.answers

    def answer(self, responses: dict[str, Any]) -> None:
        # Answers to nothing asked are ignored unread; one that is no answer leaves its question open.
        for key in responses.keys() & self.pending.keys():
            try:
                self.answers[key] = _RESPONSE.validate_python(responses[key])
            except ValidationError:
                continue
            del self.pending[key]
        self.updated = _now()
        self._answered.set()

    def envelope(self) -> dict[str, Any]:
        return {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_MS,
        }

    def detailed(self) -> dict[str, Any]:
        """tasks/get's answer: the envelope plus what this status carries."""
        detail: dict[str, Any] = {"resultType": "complete", **self.envelope()}
        if self.status == "completed":
            detail["result"] = self.result
        elif self.status == "failed":
            detail["error"] = self.error
        elif self.status == "input_required":
            detail["inputRequests"] = {key: _dump(request) for key, request in self.pending.items()}
        return detail


Work = Callable[[Task, Args, types.InputResponses], Awaitable[types.CallToolResult]]


@dataclass(frozen=True)
class TaskTool:
    tool: types.Tool
    support: Literal["optional", "required"]
    work: Work
    first: types.InputRequests | None = None  # asked by InputRequiredResult before the task starts


async def _slow_compute(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    seconds = float(args.get("seconds", 1))
    await anyio.sleep(seconds)
    return text(f"Computed {args.get('label', 'job')} in {seconds:g}s")


async def _failing_job(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    await anyio.sleep(0.2)
    return text("The job ran and reported a failure", is_error=True)


async def _protocol_error_job(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    await anyio.sleep(0.1)
    raise MCPError(types.INTERNAL_ERROR, "The job crashed before it had a result")


async def _confirm_delete(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    filename = str(args.get("filename", "file"))
    answers = await task.ask({"confirm": elicit(f"Delete {filename}?", confirm="boolean")})
    return text(f"Deleted {filename}" if answered(answers, "confirm", "confirm") is True else f"Kept {filename}")


async def _multi_input(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    questions: types.InputRequests = {
        "first": elicit("First value?", value="string"),
        "second": elicit("Second value?", value="string"),
    }
    answers = await task.ask(questions)
    return text(f"Got {answered(answers, 'first', 'value')} and {answered(answers, 'second', 'value')}")


async def _greet_later(task: Task, args: Args, answers: types.InputResponses) -> types.CallToolResult:
    await anyio.sleep(0.1)
    return text(f"Hello, {answered(answers, 'user_name', 'name')}! (from a task)")


def _tool(name: str, description: str, schema: dict[str, Any]) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema)


FILENAME = string_schema(filename="The file to delete")
COMPUTE = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
}
TASK_TOOLS = {
    t.tool.name: t
    for t in (
        TaskTool(_tool("slow_compute", "Sleeps `seconds`, then answers", COMPUTE), "optional", _slow_compute),
        TaskTool(_tool("failing_job", "Its tool reports an error", EMPTY_OBJECT), "required", _failing_job),
        TaskTool(_tool("protocol_error_job", "Fails: a protocol error", EMPTY_OBJECT), "optional", _protocol_error_job),
        TaskTool(_tool("confirm_delete", "Asks for a confirmation", FILENAME), "required", _confirm_delete),
        TaskTool(_tool("multi_input", "Asks two questions at once", EMPTY_OBJECT), "required", _multi_input),
        TaskTool(
            _tool("test_tool_with_task", "Asks the user's name, then greets from a task", EMPTY_OBJECT),
            "required",
            _greet_later,
            first={"user_name": elicit("What is your name?", name="string")},
        ),
    )
}
GREET = _tool("greet", "Says hello (never a task)", string_schema(name="Who to greet"))


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateTaskParams(TaskIdParams):
    # Raw: keys the task never asked for may carry anything (the task reads only its own).
    input_responses: dict[str, Any] = Field(default_factory=dict)


def _declares_tasks(ctx: Ctx) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and TASKS in (capabilities.extensions or {})


def _missing_extension() -> MCPError:
    data: dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    return MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY, f"This needs the {TASKS} extension", data)


class TaskStore:
    """The tasks of this process, their background runs, and the methods that reach them."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self._ids = itertools.count(1)
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Where background tasks run: entered around serving, cancelled when it ends."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def install(self, server: Server[Any]) -> None:
        server.extensions[TASKS] = {}
        server.middleware.append(self.intercept)
        server.add_request_handler("tasks/get", TaskIdParams, self.get)
        server.add_request_handler("tasks/update", UpdateTaskParams, self.update)
        server.add_request_handler("tasks/cancel", TaskIdParams, self.cancel)

    async def sync_call(self, name: str, ctx: Ctx, args: Args) -> types.CallToolResult:
        """An optional task tool run inline, for a client without the extension."""
        if float(args.get("seconds", 0)) > INLINE_LIMIT_S:
            return text(f"A job over {INLINE_LIMIT_S:g}s runs only as a task ({TASKS})", is_error=True)
        return await TASK_TOOLS[name].work(Task(id="inline"), args, {})

    async def intercept(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        """`tools/call` of a task tool: a task for a client that declared the extension."""
        if ctx.method != "tools/call" or (ctx.params or {}).get("name") not in TASK_TOOLS:
            return await call_next(ctx)
        try:
            params = types.CallToolRequestParams.model_validate(ctx.params)
        except ValidationError:
            return await call_next(ctx)  # the handler's own validation answers
        spec = TASK_TOOLS[params.name]
        if not _declares_tasks(ctx):
            if spec.support == "required":
                raise _missing_extension()
            return await call_next(ctx)
        answers = params.input_responses or {}
        if spec.first is not None and any(answered(answers, key, "name") is None for key in spec.first):
            return _dump(types.InputRequiredResult(input_requests=spec.first))
        task = self._start(spec, params.arguments or {}, answers)
        return {"resultType": "task", **task.envelope()}

    def _start(self, spec: TaskTool, args: Args, answers: types.InputResponses) -> Task:
        assert self._group is not None, "serve inside TaskStore.running()"
        task = Task(id=f"task-{next(self._ids)}")
        self.tasks[task.id] = task  # durable before the client hears of it

        async def run() -> None:
            with task.scope:
                try:
                    result = await spec.work(task, args, answers)
                except MCPError as failed:
                    task.settle("failed", error=_dump(failed.error))
                except Exception as crashed:  # a task's crash is its failure, not the server's
                    task.settle("failed", error={"code": types.INTERNAL_ERROR, "message": str(crashed)})
                else:
                    task.settle("completed", result=_dump(result))

        self._group.start_soon(run)
        return task

    def _find(self, ctx: Ctx, params: TaskIdParams) -> Task:
        if not _declares_tasks(ctx):
            raise _missing_extension()
        headers = getattr(ctx.request, "headers", None)
        if headers is not None and headers.get("mcp-name") != params.task_id:
            # The 2243 routing header names the task on tasks/* (HTTP only; the SDK checks only
            # tools/call, prompts/get and resources/read).
            raise MCPError(types.HEADER_MISMATCH, "mcp-name header does not match the request body's 'taskId'")
        task = self.tasks.get(params.task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task: {params.task_id}")
        return task

    async def get(self, ctx: Ctx, params: TaskIdParams) -> dict[str, Any]:
        return self._find(ctx, params).detailed()

    async def update(self, ctx: Ctx, params: UpdateTaskParams) -> dict[str, Any]:
        self._find(ctx, params).answer(params.input_responses)
        return {"resultType": "complete"}

    async def cancel(self, ctx: Ctx, params: TaskIdParams) -> dict[str, Any]:
        task = self._find(ctx, params)
        task.settle("cancelled")  # at once, so the next tasks/get sees it; idempotent when terminal
        task.scope.cancel()
        return {"resultType": "complete"}
