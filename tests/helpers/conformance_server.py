"""The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) expects.

    python -m tests.helpers.conformance_server              # stdio
    python -m tests.helpers.conformance_server --http PORT  # Streamable HTTP at http://127.0.0.1:PORT/mcp
    python -m tests.helpers.conformance_server --http PORT --bearer TOKEN  # ...answering 401 without the token
    python -m tests.helpers.conformance_server --handshake-only  # stdio, the handshake era only (an older server)
    python -m tests.helpers.conformance_server --no-tasks        # without the tasks extension (its tools inline)

The suite's server scenarios call fixed names (`test_simple_text`, `test://static-text`,
`test_prompt_with_arguments`, ...) and check the shapes of the answers; this module serves exactly
those, written with the SDK's low-level `Server` so every wire shape is spelled out here rather than
derived by a framework. Run the suite against it directly, or against mcpmanager with this as the
upstream, to compare the two. Diagnostics go to stderr; `ready` marks serving.

Questions to the client (sampling, elicitation, roots) follow the era the client speaks: a request
of the server's own in the handshake era, an `InputRequiredResult` answered by the client's retry
in 2026-07-28. Beyond the suite: `test_roots` and `test_elicitation_url` cover the rest of what a
server can ask; `test_touch_resource` (an update of a subscribed resource), `test_add_resource` (a
changed resource list) and `test_roots_changes` (how often the client said its roots changed) cover
the news that flows between them.

For 2026-07-28 (the suite's `--requirements 2026-07-28`): SEP-2322's multi-round tools and prompt
(`conformance_rounds.py`, `requestState` sealed by the SDK's `RequestStateBoundary`), SEP-2575's
diagnostics (`test_missing_capability`, `test_streaming_elicitation`, `test_logging_tool`,
`test_trigger_tool_change`, `test_trigger_prompt_change`), SEP-2243's `test_custom_headers` (an
`x-mcp-header` argument; header values are trimmed first, `conformance_http.py`), SEP-2106's schema
keywords, SEP-2164's `data.uri`, and the tasks extension (`conformance_tasks.py`). Directly it
passes every check of both requirement sets but the suite's INFO entries and the scenario the suite
always skips (`tasks-status-notifications`). That is more than the suite's own reference server:
its requirements file lists json-schema-2020-12, http-header-validation,
http-custom-header-server-validation and every tasks-* scenario as pending against it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar, get_args

import anyio
import mcp_types as types
import uvicorn
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.runner import serve_loop
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel
from starlette.types import ASGIApp

from tests.helpers.conformance_asking import asked_directly
from tests.helpers.conformance_http import require_bearer, trim_header_values
from tests.helpers.conformance_rounds import ROUND_PROMPT, ROUND_TOOLS, round_prompt, round_tools
from tests.helpers.conformance_tables import (
    COMPLETIONS,
    DEFAULTS_FORM,
    EMPTY_OBJECT,
    ENUMS_FORM,
    JSON_SCHEMA_2020_12,
    PNG,
    PROMPTS,
    RESOURCES,
    STATIC_BINARY,
    STATIC_TEXT,
    TEMPLATE,
    USER_FORM,
    WATCHED,
    WAV,
    MemoryEventStore,
    custom_header_schema,
    string_schema,
    text,
    user_message,
)
from tests.helpers.conformance_tasks import GREET, TASK_TOOLS, TaskStore

Ctx = ServerRequestContext[Any]
Args = dict[str, Any]
ToolHandler = Callable[[Ctx, Args], Awaitable[types.CallToolResult]]
R = TypeVar("R", bound=BaseModel)

# A 2026-07-28 client's answers to this call's questions (its retry's `inputResponses`).
_ANSWERS: ContextVar[types.InputResponses | None] = ContextVar("answers", default=None)


class _NeedInput(Exception):
    """A 2026-07-28 call must ask the client first: answered as an InputRequiredResult."""

    def __init__(self, requests: types.InputRequests) -> None:
        super().__init__("input required")
        self.requests = requests


LOGGER = "conformance-server"
LOG_LEVELS: tuple[types.LoggingLevel, ...] = get_args(types.LoggingLevel)  # least to most severe


def log(line: str) -> None:
    """One stderr line, flushed at once: whoever started us may be waiting for `ready`."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class ConformanceServer:
    """Tool, resource and prompt tables plus the per-session state the scenarios touch."""

    def __init__(self) -> None:
        # Keyed by the Mcp-Session-Id header (None on stdio, which carries a single session).
        self.log_levels: dict[str | None, types.LoggingLevel] = {}
        # Resource subscriptions: handshake-era sessions by key; modern clients listen on the bus.
        self.subscriptions: dict[str | None, set[str]] = {}
        self.watchers: dict[str | None, ServerSession] = {}
        self.bus = InMemorySubscriptionBus()
        self.added: list[types.Resource] = []
        self.added_prompts: list[types.Prompt] = []
        self.roots_changes = 0
        self.tools: dict[str, tuple[types.Tool, ToolHandler]] = {}
        self.task_store = TaskStore()
        no_args = EMPTY_OBJECT
        self._tool("test_simple_text", "Returns simple text content", no_args, self._simple_text)
        self._tool("test_image_content", "Returns image content", no_args, self._image)
        self._tool("test_audio_content", "Returns audio content", no_args, self._audio)
        self._tool("test_embedded_resource", "Returns an embedded resource", no_args, self._embedded_resource)
        self._tool("test_multiple_content_types", "Returns text, image and resource", no_args, self._mixed)
        self._tool("test_tool_with_logging", "Sends three log messages while running", no_args, self._logging)
        self._tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", no_args, self._progress)
        self._tool("test_error_handling", "Always fails with isError: true", no_args, self._error)
        prompt = string_schema(prompt="The prompt to send to the LLM")
        self._tool("test_sampling", "Asks the client's LLM (sampling/createMessage)", prompt, self._sampling)
        message = string_schema(message="The message to show the user")
        self._tool("test_elicitation", "Asks the user for input (elicitation/create)", message, self._elicitation)
        self._tool(
            "test_elicitation_sep1034_defaults",
            "Elicits a form whose fields carry default values (SEP-1034)",
            no_args,
            self._elicit_defaults,
        )
        self._tool(
            "test_elicitation_sep1330_enums",
            "Elicits a form with all five enum shapes (SEP-1330)",
            no_args,
            self._elicit_enums,
        )
        self._tool("test_roots", "Lists the client's roots (roots/list)", no_args, self._roots)
        self._tool("test_touch_resource", "Says test://watched-resource changed", no_args, self._touch)
        self._tool("test_add_resource", "Adds a resource (resources/list_changed)", no_args, self._add_resource)
        self._tool("test_roots_changes", "How often the client's roots changed", no_args, self._count_roots)
        url = string_schema(url="The URL to send the user to")
        self._tool("test_elicitation_url", "Sends the user to a URL (URL-mode elicitation)", url, self._elicit_url)
        self._tool(
            "test_reconnection",
            "Closes its SSE stream mid-call; the result arrives after the client reconnects (SEP-1699)",
            no_args,
            self._reconnection,
        )
        self._tool(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106)",
            JSON_SCHEMA_2020_12,
            self._json_schema_tool,
        )
        # The diagnostics of scenario server-stateless (SEP-2575).
        self._tool("test_missing_capability", "Needs the client's sampling capability", no_args, self._needs_sampling)
        self._tool("test_streaming_elicitation", "Answers on its request's own stream", no_args, self._streaming)
        self._tool("test_logging_tool", "Logs only if the request asked for logs", no_args, self._log_if_asked)
        self._tool("test_trigger_tool_change", "Says the tool list changed", no_args, self._tools_changed)
        self._tool("test_trigger_prompt_change", "Says the prompt list changed", no_args, self._prompts_changed)
        self._tool(
            "test_custom_headers",
            "Mirrors its `region` argument in the Mcp-Param-Region header (SEP-2243)",
            custom_header_schema(),
            self._custom_headers,
        )
        # The tasks extension's tools (SEP-2663): run inline here unless the client declared it.
        self.tools[GREET.name] = (GREET, self._greet)
        for name, task_tool in TASK_TOOLS.items():
            self.tools[name] = (task_tool.tool, self._inline_task(name))

    def _tool(self, name: str, description: str, schema: dict[str, Any], handler: ToolHandler) -> None:
        self.tools[name] = (types.Tool(name=name, description=description, input_schema=schema), handler)

    @staticmethod
    def _session_key(ctx: Ctx) -> str | None:
        request = ctx.request
        headers = getattr(request, "headers", None)
        return headers.get("mcp-session-id") if headers is not None else None

    # -- helpers for server-to-client traffic -----------------------------------------------------

    async def _log(self, ctx: Ctx, level: types.LoggingLevel, message: str) -> None:
        """A log notification on this request's own stream, honouring logging/setLevel.

        Request-scoped so it reaches the client in order with the result on Streamable HTTP (no
        need for the standalone GET stream). `allowed_log_levels` adds the 2026-07-28 rule: there,
        logs are sent only if the request opted in through `_meta`.
        """
        minimum = self.log_levels.get(self._session_key(ctx), "debug")
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(minimum):
            return
        if level not in allowed_log_levels(ctx.protocol_version, ctx.meta):
            return
        params = types.LoggingMessageNotificationParams(level=level, logger=LOGGER, data=message)
        notification = types.LoggingMessageNotification(params=params)
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

    @staticmethod
    def _scoped(ctx: Ctx) -> ServerMessageMetadata:
        # Server-to-client requests ride the POST stream of the tools/call that caused them.
        return ServerMessageMetadata(related_request_id=ctx.request_id)

    async def _ask(self, ctx: Ctx, key: str, request: types.InputRequest, result_type: type[R]) -> R:
        """The client's answer to `request`: asked directly (handshake era) or through an
        InputRequiredResult and the client's retry (2026-07-28)."""
        if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (_ANSWERS.get() or {}).get(key)
            if answer is None:
                raise _NeedInput({key: request})
            return result_type.model_validate(answer.model_dump(by_alias=True, exclude_none=True))
        return await ctx.session.send_request(request, result_type, metadata=self._scoped(ctx))

    async def _elicit(self, ctx: Ctx, message: str, schema: dict[str, Any]) -> types.ElicitResult | None:
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return None
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        return await self._ask(ctx, "elicit", types.ElicitRequest(params=params), types.ElicitResult)

    # -- tools ------------------------------------------------------------------------------------

    async def _simple_text(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return text("This is a simple text response for testing.")

    async def _image(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type="image/png")])

    async def _audio(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return types.CallToolResult(content=[types.AudioContent(data=WAV, mime_type="audio/wav")])

    async def _embedded_resource(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return types.CallToolResult(content=[types.EmbeddedResource(resource=resource)])

    async def _mixed(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
        )
        content: list[types.ContentBlock] = [
            types.TextContent(text="Multiple content types test:"),
            types.ImageContent(data=PNG, mime_type="image/png"),
            types.EmbeddedResource(resource=resource),
        ]
        return types.CallToolResult(content=content)

    async def _logging(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # The pauses make the client receive the messages one by one while the call is running.
        await self._log(ctx, "info", "Tool execution started")
        await anyio.sleep(0.05)
        await self._log(ctx, "info", "Tool processing data")
        await anyio.sleep(0.05)
        await self._log(ctx, "info", "Tool execution completed")
        return text("Tool with logging executed successfully")

    async def _progress(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        for step, progress in enumerate((0, 50, 100)):
            if step:
                await anyio.sleep(0.05)
            # A no-op unless the call carried `_meta.progressToken`.
            await ctx.session.report_progress(progress, 100, f"Completed step {progress} of 100")
        token = ctx.meta.get("progressToken") if ctx.meta else None
        return text(f"Progress reported for token {token}")

    async def _error(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return text("This tool intentionally returns an error for testing", is_error=True)

    async def _sampling(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            return text("The client does not support sampling", is_error=True)
        message = types.SamplingMessage(role="user", content=types.TextContent(text=str(args["prompt"])))
        params = types.CreateMessageRequestParams(messages=[message], max_tokens=100)
        # A request of our own rather than the deprecated create_message: sampling is current in the
        # handshake era the suite speaks, and this keeps the fixture free of deprecation warnings.
        request = types.CreateMessageRequest(params=params)
        result = await self._ask(ctx, "sample", request, types.CreateMessageResult)
        reply = result.content.text if isinstance(result.content, types.TextContent) else f"<{result.content.type}>"
        return text(f"LLM response: {reply}")

    async def _elicitation(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        result = await self._elicit(ctx, str(args["message"]), USER_FORM)
        if result is None:
            return text("The client does not support elicitation", is_error=True)
        return text(f"User response: action={result.action}, content={json.dumps(result.content or {})}")

    async def _elicit_defaults(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        result = await self._elicit(ctx, "Please review and update the form fields with defaults", DEFAULTS_FORM)
        if result is None:
            return text("The client does not support elicitation", is_error=True)
        return text(f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}")

    async def _elicit_enums(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        result = await self._elicit(ctx, "Please select options from the enum fields", ENUMS_FORM)
        if result is None:
            return text("The client does not support elicitation", is_error=True)
        return text(f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}")

    async def _roots(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return text("The client does not support roots", is_error=True)
        result = await self._ask(ctx, "roots", types.ListRootsRequest(), types.ListRootsResult)
        return text("Roots: " + json.dumps(sorted(str(root.uri) for root in result.roots)))

    async def _elicit_url(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None or capabilities.elicitation.url is None:
            return text("The client does not support URL-mode elicitation", is_error=True)
        params = types.ElicitRequestURLParams(message="Sign in", url=str(args["url"]), elicitation_id="signin-1")
        result = await self._ask(ctx, "elicit_url", types.ElicitRequest(params=params), types.ElicitResult)
        return text(f"URL elicitation: action={result.action}")

    async def _touch(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        await self.bus.publish(ResourceUpdated(WATCHED))
        told = 0
        for key, session in list(self.watchers.items()):
            if WATCHED in self.subscriptions.get(key, set()):
                notice = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=WATCHED))
                await session.send_notification(notice)  # on the standalone channel, as news is
                told += 1
        return text(f"Told {told} subscriber(s) that {WATCHED} changed")

    async def _add_resource(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        uri = f"test://added-{os.getpid()}-{len(self.added) + 1}"  # unique across fixture processes
        self.added.append(types.Resource(uri=uri, name=uri.removeprefix("test://"), description="Added at run time"))
        await self.bus.publish(ResourcesListChanged())
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await ctx.session.send_notification(types.ResourceListChangedNotification())
        return text(f"Added {uri}")

    async def _count_roots(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return text(f"Roots changed {self.roots_changes} time(s)")

    async def roots_changed(self, ctx: Ctx, params: types.NotificationParams) -> None:
        self.roots_changes += 1

    async def _reconnection(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # The SDK offers close_sse_stream only on HTTP with an event store and a 2025-11-25+
        # client; the client then reconnects with Last-Event-ID and the result is replayed.
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
        await anyio.sleep(0.1)
        return text("Reconnection test completed successfully.")

    async def _json_schema_tool(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return text(f"JSON Schema 2020-12 tool called with: {json.dumps(args, sort_keys=True)}")

    async def _needs_sampling(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # A server must not rely on a capability the client did not declare: -32021 (HTTP 400).
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            data: dict[str, Any] = {"requiredCapabilities": {"sampling": {}}}
            raise MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY, "The client did not declare sampling", data)
        return text("Success")

    async def _streaming(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # Progress on the call's own stream, never a request of the server's own (SEP-2575).
        await ctx.session.report_progress(50, 100, "Half way")
        return text("Streaming complete")

    async def _log_if_asked(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        await self._log(ctx, "info", "Diagnostic trace logging activated")  # dropped unless opted in
        return text("Logging evaluated")

    async def _tools_changed(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # A real change, not only the news of one: a proxy re-lists and tells its clients only what changed.
        name = f"test_added_tool_{len(self.tools)}"
        self._tool(name, "Added at run time (test_trigger_tool_change)", EMPTY_OBJECT, self._simple_text)
        await self.bus.publish(ToolsListChanged())
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await ctx.session.send_tool_list_changed()
        return text("Tool list change announced")

    async def _prompts_changed(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        name = f"test_added_prompt_{len(self.added_prompts) + 1}"
        self.added_prompts.append(types.Prompt(name=name, description="Added at run time (test_trigger_prompt_change)"))
        await self.bus.publish(PromptsListChanged())
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await ctx.session.send_prompt_list_changed()
        return text("Prompt list change announced")

    async def _greet(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        return text(f"Hello, {args['name']}!")

    def _inline_task(self, name: str) -> ToolHandler:
        async def inline(ctx: Ctx, args: Args) -> types.CallToolResult:
            return await self.task_store.sync_call(name, ctx, args)

        return inline

    async def _custom_headers(self, ctx: Ctx, args: Args) -> types.CallToolResult:
        # The SDK's HTTP server compares the header with the argument before this runs.
        return text(f"Region: {args['region']}")

    # -- protocol handlers ------------------------------------------------------------------------

    async def list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[*(tool for tool, _ in self.tools.values()), *round_tools()])

    async def call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name in ROUND_TOOLS:
            handler = ROUND_TOOLS[params.name][1]
            if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:  # no retries: ask the client itself
                return await asked_directly(ctx, lambda answers, state: handler(ctx, answers, state))
            return await handler(ctx, params.input_responses or {}, params.request_state)
        entry = self.tools.get(params.name)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        _ANSWERS.set(params.input_responses)
        try:
            return await entry[1](ctx, params.arguments or {})
        except KeyError as missing:
            return text(f"Missing argument {missing} for {params.name}", is_error=True)
        except _NeedInput as needed:
            # The tools here ask one question per call, so the retry's answers are all there is to keep.
            return types.InputRequiredResult(input_requests=needed.requests, request_state="asked")

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[*RESOURCES, *self.added])

    async def list_resource_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=str(TEMPLATE),
            name="template",
            description="A resource template with parameter substitution",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = params.uri
        contents: types.TextResourceContents | types.BlobResourceContents
        if uri == STATIC_TEXT:
            text_ = "This is the content of the static text resource."
            contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text=text_)
        elif uri == STATIC_BINARY:
            contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
        elif uri == WATCHED:
            contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content")
        elif (variables := TEMPLATE.match(uri)) is not None:
            id_ = str(variables["id"])
            data = {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
            contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))
        else:
            # -32002 (resource not found) is retired; current revisions answer INVALID_PARAMS with
            # the URI in `data` (SEP-2164).
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.subscriptions.setdefault(self._session_key(ctx), set()).add(params.uri)
        self.watchers[self._session_key(ctx)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self.subscriptions.get(self._session_key(ctx), set()).discard(params.uri)
        return types.EmptyResult()

    async def list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[*PROMPTS, ROUND_PROMPT, *self.added_prompts])

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        if params.name == ROUND_PROMPT.name:
            if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:

                async def step(
                    answers: types.InputResponses, state: str | None
                ) -> types.GetPromptResult | types.InputRequiredResult:
                    return round_prompt(answers)

                return await asked_directly(ctx, step)
            return round_prompt(params.input_responses or {})
        args = params.arguments or {}
        try:
            messages = self._prompt_messages(params.name, args)
        except KeyError as missing:
            raise MCPError(types.INVALID_PARAMS, f"Missing argument {missing} for prompt {params.name}") from None
        return types.GetPromptResult(messages=messages)

    @staticmethod
    def _prompt_messages(name: str, args: dict[str, str]) -> list[types.PromptMessage]:
        if name == "test_simple_prompt":
            return [user_message(types.TextContent(text="This is a simple prompt for testing."))]
        if name == "test_prompt_with_arguments":
            said = f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"
            return [user_message(types.TextContent(text=said))]
        if name == "test_prompt_with_embedded_resource":
            resource = types.TextResourceContents(
                uri=args["resourceUri"], mime_type="text/plain", text="Embedded resource content for testing."
            )
            return [
                user_message(types.EmbeddedResource(resource=resource)),
                user_message(types.TextContent(text="Please process the embedded resource above.")),
            ]
        if name == "test_prompt_with_image":
            return [
                user_message(types.ImageContent(data=PNG, mime_type="image/png")),
                user_message(types.TextContent(text="Please analyze the image above.")),
            ]
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {name}")

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        owner = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        candidates = COMPLETIONS.get((owner, params.argument.name), [])
        values = [value for value in candidates if value.startswith(params.argument.value)]
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))

    async def set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self.log_levels[self._session_key(ctx)] = params.level
        return types.EmptyResult()

    def build(self, tasks: bool = True) -> Server[Any]:
        """The server; `tasks`: with the tasks extension (without it, its task tools run inline)."""
        server: Server[Any] = Server(
            "mcp-conformance-test-server",
            version="1.0.0",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_subscriptions_listen=ListenHandler(self.bus),
            on_unsubscribe_resource=self.unsubscribe,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_completion=self.complete,
        )
        # Registered after construction: the constructor's on_set_logging_level warns that
        # logging is deprecated at 2026-07-28, but the suite tests the handshake era, where it is
        # current. The handler's presence is what advertises the `logging` capability.
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.set_level)
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self.roots_changed
        )
        # Seals every requestState on the way out and verifies it on the way back (SEP-2322).
        server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=server.name))
        if tasks:
            self.task_store.install(server)
        return server


async def serve_stdio(server: Server[Any], handshake_only: bool) -> None:
    async with stdio_server() as (read, write):
        log("ready")
        options = server.create_initialization_options(NotificationOptions())
        if not handshake_only:
            await server.run(read, write, options)
            return
        # The handshake-only loop: a 2026-07-28 probe is refused, as by a server built before it.
        async with server.lifespan(server) as state:
            await serve_loop(server, read, write, lifespan_state=state, init_options=options)


async def serve_http(server: Server[Any], port: int, bearer: str | None) -> None:
    # 127.0.0.1 turns on the SDK's DNS-rebinding protection (scenario dns-rebinding-protection);
    # the event store and retry interval enable SSE priming and resumption (SEP-1699).
    app: ASGIApp = server.streamable_http_app(event_store=MemoryEventStore(), retry_interval=1000, host="127.0.0.1")
    app = trim_header_values(app)
    if bearer is not None:
        app = require_bearer(app, bearer)
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    async def announce() -> None:
        # `ready` only once the socket accepts connections, so a waiting caller can start at once.
        while not http.started:
            await anyio.sleep(0.02)
        log(f"ready http://127.0.0.1:{port}/mcp")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(announce)
        await http.serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--bearer", metavar="TOKEN", help="with --http: require `Authorization: Bearer TOKEN`")
    parser.add_argument("--handshake-only", action="store_true", help="refuse server/discover (an older server)")
    parser.add_argument("--no-tasks", action="store_true", help="without the tasks extension (tools run inline)")
    args = parser.parse_args()
    fixture = ConformanceServer()
    server = fixture.build(tasks=not args.no_tasks)

    async def serve() -> None:
        async with fixture.task_store.running():  # where tasks run, beside the serving
            if args.http is None:
                await serve_stdio(server, args.handshake_only)
            else:
                await serve_http(server, args.http, args.bearer)

    anyio.run(serve)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends
