"""What the 2026-07-28 revision puts beside the messages, through mcpmanager: header values trimmed,
`x-mcp-header` parameters mirrored to an HTTP server (and a client's unknown `Mcp-Param-*` passed
on), caching hints merged, trace context passed through both ways, and list changes reaching an open
listen stream. Real servers (`tests/helpers/wire_server.py`, over stdio and Streamable HTTP), real
`mcpmanager serve`, the SDK's client."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged

from tests.e2e.test_http import unused_port
from tests.helpers.asking_clients import ERAS
from tests.helpers.clients import http_client, serve_client, text_of
from tests.helpers.conformance import ROOT
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.serving import serving_http
from tests.helpers.wire_server import SERVER_TRACE

CLIENT_TRACE = {
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tracestate": "client=1,vendor=opaque-VALUE",
    "baggage": "user.id=42,session=abc",
}
MODERN = "2026-07-28"


def wire(name: str, *flags: str) -> dict[str, Any]:
    """A config entry running the wire server over stdio."""
    return {
        "command": sys.executable,
        "args": ["-m", "tests.helpers.wire_server", "--name", name, *flags],
        "cwd": str(ROOT),
    }


@asynccontextmanager
async def wire_over_http(log: Path, *flags: str) -> AsyncIterator[str]:
    """The wire server served over Streamable HTTP; yields its URL."""
    port = unused_port()
    process = _spawn_wire(port, log, flags)
    try:
        await wait_for(lambda: "ready http" in log.read_text() or process.poll() is not None, timeout=30)
        assert process.poll() is None, log.read_text()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@asynccontextmanager
async def wire_entry(link: str, log: Path) -> AsyncIterator[dict[str, Any]]:
    """The wire server's config entry over `link`: run by the engine over stdio, or served here over
    Streamable HTTP (only then is one started here)."""
    if link == "stdio":
        yield wire("w")
        return
    async with wire_over_http(log) as url:
        yield {"type": "http", "url": url}


def _spawn_wire(port: int, log: Path, flags: tuple[str, ...]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.helpers.wire_server", "--http", str(port), *flags]
    with log.open("wb") as err:
        return subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=err, stderr=err)


async def tool_names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def has_tools(client: Client, *names: str) -> bool:
    return set(names) <= await tool_names(client)


def modern_post(method: str, params: dict[str, Any], headers: dict[str, str], request_id: int = 1) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            },
        },
    }
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return body, {**base, **headers}


async def post(url: str, token: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    """A modern request POSTed as raw bytes (an HTTP client library would refuse header values with
    whitespace around them, as the conformance suite's raw requests send them): (status, answer)."""
    body, sent = modern_post(method, params, {"Authorization": f"Bearer {token}", **headers})
    payload = json.dumps(body).encode()
    where = urlsplit(url)
    lines = [f"POST {where.path} HTTP/1.0", f"Host: {where.netloc}", f"Content-Length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in sent.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
    async with await anyio.connect_tcp(where.hostname or "127.0.0.1", where.port or 80) as stream:
        await stream.send(request)
        answer = b""
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            while True:
                answer += await stream.receive()
    head, _, rest = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    text = rest.decode()
    if b"text/event-stream" in head.lower():
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line)
    return status, json.loads(text)


# 1. Standard headers trimmed ---------------------------------------------------------------------


async def test_standard_headers_with_whitespace_around_them_are_accepted(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"w": wire("w")}, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served:
        async with http_client(served.url, served.token, "auto") as client:
            await wait_for(lambda: has_tools(client, "trace"), timeout=30)
        headers = {"Mcp-Method": " tools/call\t", "Mcp-Name": "  trace  ", "MCP-Protocol-Version": f" {MODERN} "}
        status, answer = await post(served.url, served.token, "tools/call", {"name": "trace", "arguments": {}}, headers)
        assert status == 200, answer
        assert answer["result"]["content"][0]["text"] == "{}"
        # A value that differs inside the whitespace is still refused, as before.
        headers["Mcp-Name"] = "  trac e  "
        status, answer = await post(served.url, served.token, "tools/call", {"name": "trace", "arguments": {}}, headers)
        assert status == 400 and answer["error"]["code"] == -32020


# 2. x-mcp-header ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["direct", "discovery"])
async def test_x_mcp_header_arguments_reach_an_http_server_as_mcp_param_headers(tmp_path: Path, mode: str) -> None:
    async with wire_over_http(tmp_path / "wire.log") as remote_url:
        config = write_config(tmp_path / "cfg", {"remote": {"type": "http", "url": remote_url}}, supervisor=FAST)
        async with serving_http(config, tmp_path / "home", mode=mode) as served:
            async with http_client(served.url, served.token, "auto") as client:
                arguments = {"region": "eu-west-1", "label": "café ünïcode", "count": 3}
                if mode == "direct":
                    await wait_for(lambda: has_tools(client, "routed"), timeout=30)
                    listed = next(t for t in (await client.list_tools()).tools if t.name == "routed")
                    properties = listed.input_schema["properties"]
                    assert properties["region"]["x-mcp-header"] == "Region"  # kept as the server wrote it
                    assert properties["label"]["x-mcp-header"] == "Label"
                    result = await client.call_tool("routed", arguments)
                else:
                    call = {"tool_name": "routed", "arguments": arguments}
                    await wait_for(lambda: _runs(client, call), timeout=30)
                    result = await client.call_tool("call_tool", call)
                # The server checked each header against its argument (a missing or wrong one is
                # refused with -32020); it answers with what it got.
                assert not result.is_error, text_of(result)
                got = json.loads(text_of(result))
                assert got["mcp-param-region"] == "eu-west-1"
                assert got["mcp-param-label"] == "=?base64?Y2Fmw6kgw7xuw69jb2Rl?="  # not ASCII: base64
            # A Mcp-Param-* header mcpmanager knows nothing of goes on to the server that gets the call.
            if mode == "direct":
                headers = {
                    "Mcp-Method": "tools/call",
                    "Mcp-Name": "routed",
                    "MCP-Protocol-Version": MODERN,
                    "Mcp-Param-Region": "us-east-2",
                    "Mcp-Param-Tenant": "acme",
                }
                params = {"name": "routed", "arguments": {"region": "us-east-2"}}
                status, answer = await post(served.url, served.token, "tools/call", params, headers)
                assert status == 200, answer
                got = json.loads(answer["result"]["content"][0]["text"])
                assert got == {"mcp-param-region": "us-east-2", "mcp-param-tenant": "acme"}


async def _runs(client: Client, call: dict[str, Any]) -> bool:
    return not (await client.call_tool("call_tool", call)).is_error


# 3. Cache fields -----------------------------------------------------------------------------------


async def test_merged_lists_are_cached_no_longer_than_their_least_fresh_server(tmp_path: Path) -> None:
    servers = {
        "slow": wire("slow", "--ttl", "60000", "--scope", "public"),
        "quick": wire("quick", "--ttl", "5000", "--scope", "public"),
    }
    config = write_config(tmp_path / "cfg", servers, supervisor=FAST)
    served_at = serving_http(config, tmp_path / "home")
    async with served_at as served, http_client(served.url, served.token, "auto") as client:
        await wait_for(lambda: has_tools(client, "slow__trace", "quick__trace"), timeout=30)
        await wait_for(lambda: _listed_both(client), timeout=30)
        for listed in (
            await client.list_tools(cache_mode="bypass"),
            await client.list_prompts(cache_mode="bypass"),
            await client.list_resources(cache_mode="bypass"),
            await client.list_resource_templates(cache_mode="bypass"),
        ):
            assert (listed.ttl_ms, listed.cache_scope) == (5000, "public"), type(listed).__name__
        # A read is its owner's answer, with its owner's hints.
        read = await client.read_resource("wire://slow/trace", cache_mode="bypass")
        assert (read.ttl_ms, read.cache_scope) == (60000, "public")
        read = await client.read_resource("wire://quick/trace", cache_mode="bypass")
        assert (read.ttl_ms, read.cache_scope) == (5000, "public")


async def _listed_both(client: Client) -> bool:
    uris = {str(r.uri) for r in (await client.list_resources(cache_mode="bypass")).resources}
    return {"wire://slow/trace", "wire://quick/trace"} <= uris


async def test_one_private_or_hintless_server_makes_the_merged_list_private_and_stale(tmp_path: Path) -> None:
    servers = {
        "shared": wire("shared", "--ttl", "60000", "--scope", "public"),
        "mine": wire("mine", "--ttl", "30000", "--scope", "private"),
    }
    config = write_config(tmp_path / "cfg", servers, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served:
        async with http_client(served.url, served.token, "auto") as client:
            await wait_for(lambda: has_tools(client, "shared__trace", "mine__trace"), timeout=30)
            listed = await client.list_tools(cache_mode="bypass")
            assert (listed.ttl_ms, listed.cache_scope) == (30000, "private")
        async with http_client(f"{served.url}/discovery", served.token, "auto") as client:
            # Discovery lists mcpmanager's own meta-tools alone: no server's part, the default.
            listed = await client.list_tools(cache_mode="bypass")
            assert (listed.ttl_ms, listed.cache_scope) == (0, "private")


# 4. Trace context ----------------------------------------------------------------------------------


@pytest.mark.parametrize("link", ["stdio", "http"])
@pytest.mark.parametrize("era", ERAS)
async def test_trace_context_reaches_the_server_and_comes_back(tmp_path: Path, era: str, link: str) -> None:
    async with wire_entry(link, tmp_path / "wire.log") as entry:
        config = write_config(tmp_path / "cfg", {"w": entry}, supervisor=FAST)
        meta: types.RequestParamsMeta = dict(CLIENT_TRACE)  # type: ignore[assignment]
        expected = json.dumps(CLIENT_TRACE, sort_keys=True)
        async with serving_http(config, tmp_path / "home") as served, http_client(served.url, served.token, era) as c:
            await wait_for(lambda: has_tools(c, "trace"), timeout=30)
            for _ in range(2):  # the first and a later call (the fast lane takes calls to a ready stdio server)
                called = await c.session.call_tool("trace", {}, meta=meta)
                assert isinstance(called, types.CallToolResult)
                assert text_of(called) == expected
                assert _trace_keys(called.meta) == SERVER_TRACE
            prompt = await c.session.get_prompt("trace_prompt", meta=meta)
            assert isinstance(prompt, types.GetPromptResult)
            content = prompt.messages[0].content
            assert isinstance(content, types.TextContent) and content.text == expected
            assert _trace_keys(prompt.meta) == SERVER_TRACE
            read = await c.session.read_resource("wire://trace", meta=meta)
            assert isinstance(read, types.ReadResourceResult)
            contents = read.contents[0]
            assert isinstance(contents, types.TextResourceContents) and contents.text == expected
            assert _trace_keys(read.meta) == SERVER_TRACE
            ref = types.PromptReference(name="trace_prompt")
            argument = types.CompletionArgument(name="x", value="")
            params = types.CompleteRequestParams(ref=ref, argument=argument, _meta=meta)
            completed = await c.session.send_request(types.CompleteRequest(params=params), types.CompleteResult)
            assert completed.completion.values == [expected]


async def test_trace_context_over_serve_stdio(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"w": wire("w")}, supervisor=FAST)
    home = tmp_path / "home"
    home.mkdir()
    meta: types.RequestParamsMeta = dict(CLIENT_TRACE)  # type: ignore[assignment]
    async with serve_client(config, home, "auto") as client:
        await wait_for(lambda: has_tools(client, "trace"), timeout=30)
        called = await client.session.call_tool("trace", {}, meta=meta)
        assert isinstance(called, types.CallToolResult)
        assert json.loads(text_of(called)) == CLIENT_TRACE
        assert _trace_keys(called.meta) == SERVER_TRACE


def _trace_keys(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(meta or {}).items() if k in CLIENT_TRACE}


# 5. List changes on an open listen stream ----------------------------------------------------------


@pytest.mark.parametrize("link", ["stdio", "http"])
async def test_a_servers_list_changes_reach_an_open_listen_stream(tmp_path: Path, link: str) -> None:
    async with wire_entry(link, tmp_path / "wire.log") as entry:
        config = write_config(tmp_path / "cfg", {"w": entry}, supervisor=FAST)
        async with (
            serving_http(config, tmp_path / "home") as served,
            http_client(served.url, served.token, "auto") as c,
        ):
            await wait_for(lambda: has_tools(c, "test_trigger_tool_change"), timeout=30)
            async with c.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
                for trigger, event in (
                    ("test_trigger_tool_change", ToolsListChanged),
                    ("test_trigger_prompt_change", PromptsListChanged),
                ):
                    await c.call_tool(trigger, {})
                    with anyio.fail_after(1.5):  # the conformance suite's window
                        async for seen in subscription:
                            if isinstance(seen, event):
                                break
            assert "added_4" in await tool_names(c)
