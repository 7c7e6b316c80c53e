"""An MCP App server written with the SDK's Apps support (`mcp.server.apps`), for the MCP Apps tests.

    python -m tests.helpers.apps_server --name clock                   # stdio, both protocol eras
    python -m tests.helpers.apps_server --name clock --handshake-only  # stdio, the handshake era only

A UI tool `show_<name>` renders `ui://dashboard/app.html` (the same URI whatever `--name`, so two of
these servers clash on it, each with its own page); an app-only tool `refresh_<name>` is what the
page's button calls; `plain_<name>` has no UI. Each tool's text names the server, and says whether
the calling client declared MCP Apps (so a test sees what reached the server). `ready` on stderr
marks serving.
"""

from __future__ import annotations

import argparse
import gc
import sys

import anyio
from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

URI = "ui://dashboard/app.html"
CSP = ResourceCsp(connect_domains=["https://api.example.com"])


def page(name: str) -> str:
    """The server's HTML page: its name in it, and a non-ASCII character, so byte-identity means it."""
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>" + name + " dashboard</title></head>\n"
        "<body><h1>" + name + " — dashboard</h1><button id='refresh'>Refresh</button>\n"
        "<script>/* calls refresh_" + name + " through the host */</script></body></html>\n"
    )


def build(name: str) -> MCPServer:
    apps = Apps()

    @apps.tool(resource_uri=URI, name=f"show_{name}", description=f"Show the {name} dashboard")
    def show(ctx: Context) -> str:
        return f"{name} dashboard (the client declared MCP Apps: {client_supports_apps(ctx)})"

    @apps.tool(resource_uri=URI, visibility=["app"], name=f"refresh_{name}", description=f"Refresh {name}")
    def refresh(ctx: Context) -> str:
        return f"{name} refreshed (the client declared MCP Apps: {client_supports_apps(ctx)})"

    apps.add_html_resource(URI, page(name), name=f"{name} dashboard", csp=CSP, prefers_border=True)
    server = MCPServer(name, extensions=[apps])

    @server.tool(name=f"plain_{name}", description=f"A {name} tool without a UI")
    def plain() -> str:
        return f"{name} plain"

    return server


async def serve(server: MCPServer, handshake_only: bool) -> None:
    lowlevel = server._lowlevel_server  # the SDK's own runner below, for the handshake-only loop
    async with stdio_server() as (read, write):
        print("ready", file=sys.stderr, flush=True)
        options = lowlevel.create_initialization_options(NotificationOptions())
        if not handshake_only:
            await lowlevel.run(read, write, options)
            return
        # A 2026-07-28 probe is refused, as by a server built before that revision.
        async with lowlevel.lifespan(lowlevel) as state:
            await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--handshake-only", action="store_true")
    args = parser.parse_args()
    anyio.run(serve, build(args.name), args.handshake_only)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends
