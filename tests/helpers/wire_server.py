"""A server for what the 2026-07-28 revision puts beside the messages: caching hints, trace context,
`x-mcp-header` parameters and list changes. Written with the SDK's low-level `Server`.

    python -m tests.helpers.wire_server [--name N] [--ttl MS] [--scope public|private]   # stdio
    python -m tests.helpers.wire_server --http PORT ...   # Streamable HTTP at http://127.0.0.1:PORT/mcp

- Every list and read answer carries `--ttl`/`--scope` (to a 2026-07-28 client; the SDK's cache
  hints), so a proxy's merge of several such servers can be checked.
- `trace` (tool), `trace_prompt` (prompt, and a completion for it) and `wire://trace` (resource)
  answer with the trace keys (`traceparent`, `tracestate`, `baggage`) their request's `_meta`
  carried, as JSON text, and put the server's own trace keys (`SERVER_TRACE`) in their result's
  `_meta`.
- `routed` has `region` and `label` annotated with `x-mcp-header`: over HTTP the SDK checks the
  `Mcp-Param-*` headers against the arguments (a mismatch or a missing header is refused with
  -32020); its answer is every `Mcp-Param-*` header the request carried, as JSON text.
- `capabilities` answers with the client capabilities its request was sent with (a 2026-07-28
  request's envelope: those of the client a proxy calls for), as JSON text.
- `test_trigger_tool_change` / `test_trigger_prompt_change` (the conformance suite's names) add a
  tool / a prompt and say so to clients of both eras.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request

Ctx = ServerRequestContext[Any]
TRACE_KEYS = ("traceparent", "tracestate", "baggage")
SERVER_TRACE = {
    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "tracestate": "server=wire",
    "baggage": "answered.by=wire",
}
ROUTED_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "label": {"type": "string", "x-mcp-header": "Label"},
        "count": {"type": "integer"},
    },
    "required": ["region"],
}
CACHEABLE = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# Listed after the rest (the added tools are named by how many came before them).
CAPABILITIES = types.Tool(
    name="capabilities", description="The request's client capabilities", input_schema={"type": "object"}
)


def traced(ctx: Ctx) -> str:
    meta: dict[str, Any] = dict(ctx.meta or {})
    return json.dumps({key: meta[key] for key in TRACE_KEYS if key in meta}, sort_keys=True)


class WireServer:
    def __init__(self, name: str) -> None:
        self.name = name
        self.bus = InMemorySubscriptionBus()
        self.legacy: ServerSession | None = None  # stdio: one connection, the latest handshake-era session
        self.tools = [
            types.Tool(name="trace", description="The trace context of the request", input_schema={"type": "object"}),
            types.Tool(name="routed", description="Mcp-Param headers of the request", input_schema=ROUTED_SCHEMA),
            types.Tool(name="test_trigger_tool_change", description="Adds a tool", input_schema={"type": "object"}),
            types.Tool(name="test_trigger_prompt_change", description="Adds a prompt", input_schema={"type": "object"}),
        ]
        self.prompts = [types.Prompt(name="trace_prompt", description="The trace context of the request")]

    def _remember(self, ctx: Ctx) -> None:
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.legacy = ctx.session

    async def list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=[*self.tools, CAPABILITIES])

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        self._remember(ctx)
        if params.name == "trace":
            return types.CallToolResult(content=[types.TextContent(text=traced(ctx))], _meta=dict(SERVER_TRACE))
        if params.name == "capabilities":
            declared = ctx.session.client_capabilities
            dumped = declared.model_dump(mode="json", by_alias=True, exclude_none=True) if declared else None
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(dumped, sort_keys=True))])
        if params.name == "routed":
            request = ctx.request
            headers = dict(request.headers) if isinstance(request, Request) else {}
            sent = {k: v for k, v in sorted(headers.items()) if k.startswith("mcp-param-")}
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(sent))])
        if params.name == "test_trigger_tool_change":
            added = f"added_{len(self.tools)}"
            self.tools.append(types.Tool(name=added, description="An added tool", input_schema={"type": "object"}))
            await self.bus.publish(ToolsListChanged())
            if self.legacy is not None:
                await self.legacy.send_tool_list_changed()
            return types.CallToolResult(content=[types.TextContent(text=added)])
        if params.name == "test_trigger_prompt_change":
            added = f"added_prompt_{len(self.prompts)}"
            self.prompts.append(types.Prompt(name=added, description="An added prompt"))
            await self.bus.publish(PromptsListChanged())
            if self.legacy is not None:
                await self.legacy.send_prompt_list_changed()
            return types.CallToolResult(content=[types.TextContent(text=added)])
        return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True)

    async def list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        self._remember(ctx)
        return types.ListPromptsResult(prompts=self.prompts)

    async def get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        message = types.PromptMessage(role="user", content=types.TextContent(text=traced(ctx)))
        return types.GetPromptResult(messages=[message], _meta=dict(SERVER_TRACE))

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        self._remember(ctx)
        resource = types.Resource(uri=f"wire://{self.name}/trace", name=f"{self.name} trace", mime_type="text/plain")
        return types.ListResourcesResult(resources=[types.Resource(uri="wire://trace", name="trace"), resource])

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(uri_template=f"wire://{self.name}/item/{{id}}", name=f"{self.name} item")
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        contents = types.TextResourceContents(uri=str(params.uri), mime_type="application/json", text=traced(ctx))
        return types.ReadResourceResult(contents=[contents], _meta=dict(SERVER_TRACE))

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        return types.CompleteResult(completion=types.Completion(values=[traced(ctx)]))

    def build(self, ttl_ms: int, scope: str) -> Server[Any]:
        hint = CacheHint(ttl_ms=ttl_ms, scope="public" if scope == "public" else "private")
        return Server(
            self.name,
            version="1.0.0",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_templates,
            on_read_resource=self.read_resource,
            on_completion=self.complete,
            on_subscriptions_listen=ListenHandler(self.bus),
            cache_hints=dict.fromkeys(CACHEABLE, hint),  # type: ignore[arg-type]
        )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        log("ready")
        options = server.create_initialization_options(NotificationOptions(tools_changed=True, prompts_changed=True))
        await server.run(read, write, options)


async def serve_http(server: Server[Any], port: int) -> None:
    app = server.streamable_http_app(host="127.0.0.1")
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    async def announce() -> None:
        while not http.started:
            await anyio.sleep(0.02)
        log(f"ready http://127.0.0.1:{port}/mcp")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(announce)
        await http.serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--name", default="wire")
    parser.add_argument("--ttl", type=int, default=0, help="ttlMs on every list and read answer")
    parser.add_argument("--scope", choices=("public", "private"), default="private")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    server = WireServer(args.name).build(args.ttl, args.scope)
    if args.http is None:
        anyio.run(serve_stdio, server)
    else:
        anyio.run(serve_http, server, args.http)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends
