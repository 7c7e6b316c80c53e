"""A 2026-07-28 server written with the SDK's low-level Server, for what must reach it and come back
as written: the calling client's capabilities in each request's envelope, questions asked several at
once under the server's own keys with a `requestState` it checks, and the protocol errors the spec
defines. Run as `python -m tests.helpers.round_server [--handshake-only]` over stdio.

Tools:
  declared        the client capabilities this request carried, as JSON text
  needs_sampling  refuses with -32021 (data: what is missing) unless the request declared sampling
  ask_two         asks `user_name` and `favourite_colour` in one InputRequiredResult; the retry must
                  bring the server's own requestState back unaltered (else -32602) and both answers
  where_and_who   asks roots (`where`) and a form (`who`) in one round: the answers it got, as JSON
  bad_params      refuses with -32602 and data {"field": "x"}
Resources: `round://known` reads; any other URI is not found (-32602 with data.uri; handshake-only:
-32002 with no data, as servers of that era write it).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import hmac
import json
import secrets
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

Ctx = ServerRequestContext[Any]
KNOWN = "round://known"
_KEY = secrets.token_bytes(16)  # signs this process's requestStates
_OBJECT = {"type": "object", "properties": {}}


def _form(message: str) -> types.ElicitRequest:
    schema = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def _signed(payload: str) -> str:
    return payload + "." + hmac.new(_KEY, payload.encode(), hashlib.sha256).hexdigest()


def _intact(state: str | None) -> bool:
    if state is None or "." not in state:
        return False
    payload = state.rsplit(".", 1)[0]
    return hmac.compare_digest(_signed(payload), state)


def _text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def _capabilities(ctx: Ctx) -> types.ClientCapabilities:
    return ctx.session.client_capabilities or types.ClientCapabilities()


def _answer_text(answer: types.InputResponse | None) -> Any:
    if isinstance(answer, types.ElicitResult):
        return answer.content
    if isinstance(answer, types.ListRootsResult):
        return sorted(str(root.uri) for root in answer.roots)
    return None


async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    names = ["declared", "needs_sampling", "ask_two", "where_and_who", "bad_params"]
    return types.ListToolsResult(tools=[types.Tool(name=name, input_schema=_OBJECT) for name in names])


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
    capabilities = _capabilities(ctx)
    name = params.name
    if name == "declared":
        return _text(json.dumps(capabilities.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True))
    if name == "needs_sampling":
        if capabilities.sampling is None:
            raise MCPError(
                types.MISSING_REQUIRED_CLIENT_CAPABILITY, "This tool needs sampling.", {"required": ["sampling"]}
            )
        return _text("sampling declared")
    if name == "bad_params":
        raise MCPError(types.INVALID_PARAMS, "x must be a number", {"field": "x"})
    if name == "ask_two":
        if capabilities.elicitation is None:
            raise MCPError(
                types.MISSING_REQUIRED_CLIENT_CAPABILITY, "This tool needs elicitation.", {"required": ["elicitation"]}
            )
        questions: dict[str, types.InputRequest] = {
            "user_name": _form("Your name?"),
            "favourite_colour": _form("Your favourite colour?"),
        }
        return _round(params, questions)
    if name == "where_and_who":
        return _round(params, {"where": types.ListRootsRequest(), "who": _form("Who are you?")})
    raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")


def _round(
    params: types.CallToolRequestParams, questions: dict[str, types.InputRequest]
) -> types.CallToolResult | types.InputRequiredResult:
    """The questions in one InputRequiredResult; on the retry (the state checked), what came back."""
    if params.request_state is None:
        state = _signed(f"{params.name}:{secrets.token_hex(8)}")
        return types.InputRequiredResult(input_requests=questions, request_state=state)
    if not _intact(params.request_state) or not params.request_state.startswith(f"{params.name}:"):
        raise MCPError(types.INVALID_PARAMS, "requestState failed its integrity check", {"reason": "tampered"})
    responses = params.input_responses or {}
    answers = {key: _answer_text(responses.get(key)) for key in sorted(questions)}
    return _text(json.dumps({"answers": answers, "keys": sorted(responses), "state": "intact"}, sort_keys=True))


def read_resource(handshake_only: bool) -> Any:
    async def read(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if params.uri == KNOWN:
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=KNOWN, text="known")])
        if handshake_only:
            raise MCPError(-32002, f"No such resource: {params.uri}")
        raise MCPError(types.INVALID_PARAMS, f"No such resource: {params.uri}", {"uri": params.uri})

    return read


async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri=KNOWN, name="known")])


def build(handshake_only: bool) -> Server[Any]:
    return Server(
        "round-server",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource(handshake_only),
    )


async def serve(handshake_only: bool) -> None:
    server = build(handshake_only)
    async with stdio_server() as (read, write):
        sys.stderr.write("ready\n")
        sys.stderr.flush()
        options = server.create_initialization_options(NotificationOptions())
        if not handshake_only:
            await server.run(read, write, options)
            return
        async with server.lifespan(server) as state:  # refuses server/discover: an older server
            await serve_loop(server, read, write, lifespan_state=state, init_options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--handshake-only", action="store_true", help="refuse server/discover (an older server)")
    anyio.run(serve, parser.parse_args().handshake_only)


if __name__ == "__main__":
    main()
    gc.freeze()  # the exit's collections skip what is frozen: out ~0.2 s sooner once stdin ends
