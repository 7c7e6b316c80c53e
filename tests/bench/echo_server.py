"""The benchmarks' downstream: one `echo` tool and nothing else, over stdio or Streamable HTTP, so
that what a path adds is all that differs between paths.

    python tests/bench/echo_server.py            stdio
    python tests/bench/echo_server.py --http N   http://127.0.0.1:N/mcp ("ready" on stderr once it listens)
    python tests/bench/echo_server.py --sse N    http://127.0.0.1:N/sse, the older SSE transport (the same)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from starlette.types import Receive, Scope, Send

ECHO = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build() -> Server[Any]:
    return Server("echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], port: int) -> None:
    app = server.streamable_http_app(host="127.0.0.1")
    await _listen(uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")), port, "mcp")


async def _listen(http: uvicorn.Server, port: int, path: str) -> None:
    async def announce() -> None:
        while not http.started:
            await anyio.sleep(0.02)
        print(f"ready http://127.0.0.1:{port}/{path}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(announce)
        await http.serve()


async def serve_sse(server: Server[Any], port: int) -> None:
    """The SSE transport (a GET stream for the server's messages, a POST for each client message),
    as a peer that speaks only it (mcp-hub) is reached: its direct baseline."""
    sse = SseServerTransport("/messages/")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/sse":
            async with sse.connect_sse(scope, receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())
        else:
            await sse.handle_post_message(scope, receive, send)

    await _listen(uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")), port, "sse")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--sse", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is not None:
        anyio.run(serve_http, build(), args.http)
    elif args.sse is not None:
        anyio.run(serve_sse, build(), args.sse)
    else:
        anyio.run(serve_stdio, build())


if __name__ == "__main__":
    main()
