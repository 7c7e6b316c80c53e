"""`serve --http` answers a request with JSON unless it needs a stream (`serve/json_first.py`): seen on
the wire with a plain HTTP client against a real `serve --http` and a real fixture server. A plain
call comes back as one JSON body; a call whose server reports progress becomes an SSE stream whose
first event is that progress, and one silent for long becomes a stream too; what the SDK answers itself
(the handshake, a notification, a malformed body, a client that accepts only JSON) is the SDK's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpmanager.core.serve.json_first import QUIET
from tests.helpers.clients import text_of
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import Served, serving_http

BOTH = "application/json, text/event-stream"
VERSION = "2025-11-25"


class Session:
    def __init__(self, http: httpx2.AsyncClient, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.session_id = ""
        self.next_id = 0

    def headers(self, accept: str = BOTH) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": accept, "Content-Type": "application/json"}
        if self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "Mcp-Protocol-Version": VERSION}
        return headers

    async def post(self, method: str, params: dict[str, Any] | None = None, accept: str = BOTH) -> httpx2.Response:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        return await self.http.post(self.url, content=json.dumps(body), headers=self.headers(accept))

    async def notify(self, method: str) -> httpx2.Response:
        body = {"jsonrpc": "2.0", "method": method}
        return await self.http.post(self.url, content=json.dumps(body), headers=self.headers())


@asynccontextmanager
async def session(tmp_path: Path) -> AsyncIterator[tuple[Session, Served]]:
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served, httpx2.AsyncClient(timeout=30) as http:
        client = Session(http, f"{served.url}/direct", served.token)
        info = {"name": "raw", "version": "1"}
        opened = await client.post("initialize", {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": info})
        assert opened.status_code == 200, opened.text
        client.session_id = opened.headers["mcp-session-id"]
        assert (await client.notify("notifications/initialized")).status_code == 202
        yield client, served


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


async def test_a_plain_call_is_one_json_body(tmp_path: Path) -> None:
    async with session(tmp_path) as (client, _served):
        for n in range(3):
            answer = await client.post("tools/call", {"name": "echo", "arguments": {"text": f"plain {n}"}})
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/json"
            assert answer.headers["mcp-session-id"] == client.session_id
            body = answer.json()
            assert body["id"] == client.next_id and body["result"]["content"][0]["text"] == f"plain {n}"
        listed = await client.post("tools/list")
        assert listed.headers["content-type"] == "application/json" and listed.json()["result"]["tools"]


async def test_the_sdk_client_gets_json_answers_and_works_with_them(tmp_path: Path) -> None:
    """The SDK's own client, as `connect` and most Python clients use it: its calls come back as
    JSON bodies (seen on its HTTP client's responses), and it reads them as it read streams."""
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    types_seen: list[str] = []

    async def record(response: httpx2.Response) -> None:
        if response.request.method == "POST":
            types_seen.append(response.headers.get("content-type", ""))

    async with serving_http(config, tmp_path / "home") as served:
        headers = {"Authorization": f"Bearer {served.token}"}
        async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http:
            transport = streamable_http_client(f"{served.url}/direct", http_client=http)
            async with Client(transport, mode="legacy", cache=None) as client:
                await client.list_tools()
                types_seen.clear()
                for n in range(5):
                    assert text_of(await client.call_tool("echo", {"text": f"call {n}"})) == f"call {n}"
    assert len(types_seen) >= 5 and set(types_seen) == {"application/json"}, types_seen


async def test_a_call_silent_past_the_wait_is_streamed_so_pings_keep_it_alive(tmp_path: Path) -> None:
    """Found in review: with JSON only, a long call that sends nothing sent no byte until its end,
    and a client's (or a proxy's) read timeout ended it; after QUIET seconds it is a stream."""
    async with session(tmp_path) as (client, _served):
        answer = await client.post("tools/call", {"name": "sleep", "arguments": {"seconds": QUIET + 1}})
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        received = events(answer.text)
        assert received[-1]["id"] == client.next_id and received[-1]["result"]["content"]


async def test_a_call_that_reports_progress_becomes_a_stream_that_starts_with_it(tmp_path: Path) -> None:
    async with session(tmp_path) as (client, _served):
        params = {"name": "slow", "arguments": {"seconds": 0.3, "steps": 3}, "_meta": {"progressToken": "p1"}}
        answer = await client.post("tools/call", params)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        received = events(answer.text)
        methods = [event.get("method") for event in received]
        assert methods[:3] == ["notifications/progress"] * 3, received
        assert [e["params"]["progress"] for e in received[:3]] == sorted(e["params"]["progress"] for e in received[:3])
        assert received[-1]["id"] == client.next_id and "result" in received[-1]


@pytest.mark.parametrize(
    ("accept", "status", "content_type"),
    [("application/json", 406, "application/json"), ("text/event-stream", 406, "application/json")],
)
async def test_a_client_that_does_not_take_both_is_answered_by_the_sdk(
    tmp_path: Path, accept: str, status: int, content_type: str
) -> None:
    async with session(tmp_path) as (client, _served):
        answer = await client.post("tools/call", {"name": "echo", "arguments": {"text": "x"}}, accept=accept)
        assert answer.status_code == status and answer.headers["content-type"] == content_type


async def test_a_request_in_a_closed_or_foreign_session_is_refused_as_before(tmp_path: Path) -> None:
    async with session(tmp_path) as (client, _served):
        own = client.session_id
        client.session_id = "0" * 32
        answer = await client.post("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert answer.status_code == 404
        client.session_id = own
        garbled = await client.http.post(client.url, content=b"{not json", headers=client.headers())
        assert garbled.status_code == 400 and garbled.json()["error"]["code"] == -32700
