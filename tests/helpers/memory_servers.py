"""MCP servers in this process, written with the SDK's low-level `Server`, for fast unit tests: a
tool table, calls that answer (or wait until released), and list_changed in both protocol eras.
They run on the SDK's in-memory streams: no process, no pipe, no port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.sdk_compat import TransportStreams

STRING = {"type": "string"}


def tool(name: str, description: str = "", **properties: dict[str, Any]) -> types.Tool:
    required = [key for key in properties if not key.startswith("opt_")]
    schema = {"type": "object", "properties": properties, "required": required}
    return types.Tool(name=name, description=description or f"The {name} tool.", input_schema=schema)


class MemoryServer:
    """`echo` (returns its `text`) and `block` (answers when `release()` is called), plus any tools
    added; every call is recorded in `calls` as (name, arguments)."""

    def __init__(self, name: str = "memory", *extra: types.Tool) -> None:
        self.name = name
        self.tools = {t.name: t for t in (tool("echo", "Say the text back.", text=STRING), tool("block"), *extra)}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.released = anyio.Event()
        self.bus = InMemorySubscriptionBus()
        self._legacy: ServerSession | None = None
        self.server: Server[Any] = Server(
            name,
            version="1.0.0",
            on_list_tools=self._list,
            on_call_tool=self._call,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    def release(self) -> None:
        self.released.set()

    async def change_tools(self, *tools: types.Tool) -> None:
        """Replace the extra tools and tell the client, in its era."""
        self.tools = {name: t for name, t in self.tools.items() if name in ("echo", "block")}
        self.tools.update({t.name: t for t in tools})
        await self.bus.publish(ToolsListChanged())
        if self._legacy is not None:
            await self._legacy.send_tool_list_changed()

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[TransportStreams, Callable[[], None]]]:
        """The client's streams while the server runs, and what ends the server as a dying process
        ends: it stops, and its end of the stream closes (the client reads EOF)."""
        options = self.server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with create_client_server_memory_streams() as (client, served), anyio.create_task_group() as tg:
            scope = anyio.CancelScope()

            async def run() -> None:
                with scope:
                    await self.server.run(served[0], served[1], options)

            def end() -> None:
                scope.cancel()
                served[1].close()

            tg.start_soon(run)
            try:
                yield client, end
            finally:
                tg.cancel_scope.cancel()

    async def _list(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        self._remember(ctx)
        return types.ListToolsResult(tools=list(self.tools.values()))

    async def _call(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        self._remember(ctx)
        arguments = params.arguments or {}
        self.calls.append((params.name, arguments))
        if params.name == "block":
            await self.released.wait()
        if params.name == "refuse":  # a protocol error whose message is the `text` given
            raise MCPError(types.INVALID_PARAMS, str(arguments.get("text")))
        text = str(arguments.get("text", params.name))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        if ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._legacy = ctx.session
