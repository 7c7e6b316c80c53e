"""A 2026-07-28 client's calls over HTTP on the lane ahead of the SDK's entry for that era
(`serve/modern_first`), with real subprocess servers, `serve_http` in this process (its counters
read) and raw POSTs (so the headers, status and body are what is checked): the answer is the one the
SDK's entry gives for the same call, the server's logs of the call ride an SSE stream, a silent call
is pinged, the client closing its POST cancels the call at the server, and whatever the entry would
refuse is left to it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve import modern_first
from mcpmanager.core.serve.http import serve_http
from tests.e2e.test_beside_messages import CLIENT_TRACE, wire
from tests.e2e.test_fast_lane import engine_with
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import fixture

MODERN = "2026-07-28"
TOKEN = "t0ken"


def envelope(**extra: Any) -> dict[str, Any]:
    return {
        types.PROTOCOL_VERSION_META_KEY: MODERN,
        types.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
        types.CLIENT_CAPABILITIES_META_KEY: {},
        **extra,
    }


class Endpoint:
    def __init__(self, url: str, http: httpx2.AsyncClient) -> None:
        self.url = url
        self.http = http

    def request(
        self, request_id: int, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None, **headers: str
    ) -> httpx2.Request:
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": envelope() if meta is None else meta},
        }
        sent = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
            **headers,
        }
        return self.http.build_request("POST", self.url, content=json.dumps(body).encode(), headers=sent)

    async def call(self, *args: Any, **kwargs: Any) -> Answer:
        answer = await self.http.send(self.request(*args, **kwargs))
        return Answer(answer.status_code, answer.headers.get("content-type", ""), answer.headers, answer.content)


class Answer:
    def __init__(self, status: int, kind: str, headers: Any, body: bytes) -> None:
        self.status = status
        self.kind = kind
        self.headers = headers
        self.body = body

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the answer: the body, or the SSE stream's events in order."""
        if self.kind.startswith("application/json"):
            return [json.loads(self.body)]
        assert self.kind.startswith("text/event-stream"), self.kind
        return [json.loads(line[5:]) for line in self.body.decode().splitlines() if line.startswith("data:")]

    def comparable(self) -> tuple[int, str, list[dict[str, Any]]]:
        return self.status, self.kind, self.messages()


@asynccontextmanager
async def endpoint(engine: Engine) -> AsyncIterator[Endpoint]:
    urls: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, engine.router, 0, urls.append, token=TOKEN))
        await wait_for(lambda: bool(urls), 10)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
            yield Endpoint(urls[0], http)
        tg.cancel_scope.cancel()


async def test_the_lane_s_answers_are_the_sdk_entry_s(tmp_path: Path) -> None:
    """The same calls with the lane and without (the SDK's entry, its middleware lane inside): the
    same status, type and messages; no session id either way."""
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("echo", {"text": "héllo"}, envelope()),
        ("fail", {"message": "no"}, envelope()),
        ("add", {"a": 1, "b": 2}, envelope(**CLIENT_TRACE, **{types.LOG_LEVEL_META_KEY: "debug"})),
    ]
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, endpoint(engine) as served:
        lane = engine.router.fast_lane
        answers: dict[bool, list[Answer]] = {}
        for enabled in (True, False):
            lane.enabled = enabled
            ahead = lane.ahead
            answers[enabled] = [await served.call(n, *call) for n, call in enumerate(calls, 1)]
            assert lane.ahead == ahead + (3 if enabled else 0)
        for fast, full in zip(answers[True], answers[False], strict=True):
            assert fast.comparable() == full.comparable()
            assert "mcp-session-id" not in fast.headers and "mcp-session-id" not in full.headers
        echoed = answers[True][0].messages()[-1]["result"]
        assert echoed["structuredContent"] == {"text": "héllo"} and echoed["resultType"] == "complete"
        assert answers[True][1].messages()[-1]["result"]["isError"] is True


async def test_the_server_s_logs_of_the_call_ride_its_stream_at_the_level_it_asked(tmp_path: Path) -> None:
    async with (
        engine_with(tmp_path, {"old": conformance_fixture("--handshake-only")}) as engine,
        endpoint(engine) as served,
    ):
        lane = engine.router.fast_lane
        for level, logs in (("info", 3), ("warning", 0)):
            ahead = lane.ahead
            answer = await served.call(1, "test_tool_with_logging", {}, envelope(**{types.LOG_LEVEL_META_KEY: level}))
            assert lane.ahead == ahead + 1 and answer.status == 200
            messages = answer.messages()
            assert answer.kind.startswith("text/event-stream" if logs else "application/json")
            assert [m.get("method") for m in messages] == ["notifications/message"] * logs + [None]
            assert messages[-1]["id"] == 1 and "result" in messages[-1]


async def test_a_silent_call_is_streamed_and_pinged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modern_first, "PING", 0.3)
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, endpoint(engine) as served:
        answer = await served.call(7, "sleep", {"seconds": 1.2})
        assert answer.status == 200 and answer.kind.startswith("text/event-stream")
        assert answer.body.count(b": ping") >= 2
        (message,) = answer.messages()
        assert message["id"] == 7 and not message["result"].get("isError")
        assert engine.router.fast_lane.ahead == 1


async def test_closing_the_post_cancels_the_call_at_the_server(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, endpoint(engine) as served:
        log = engine.downstreams["a"].log

        async def abandoned() -> None:
            await served.http.send(served.request(1, "sleep", {"seconds": 60}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(abandoned)
            await wait_for(lambda: any("sleeping 60" in line for line in log.tail(100)), 10)
            assert engine.router.fast_lane.ahead == 1
            tg.cancel_scope.cancel()  # the client gives up: its connection closes
        await wait_for(lambda: any("cancelled sleep" in line for line in log.tail(100)), 10)
        answer = await served.call(2, "echo", {"text": "still here"})
        assert answer.messages()[0]["result"]["structuredContent"] == {"text": "still here"}
        assert engine.router.activity.records()[0].outcome == "cancelled"


async def test_what_the_sdk_s_entry_refuses_is_left_to_it(tmp_path: Path) -> None:
    """A routing header that disagrees with the body, a routing header twice, an `Mcp-Param-*`
    header that disagrees with its argument, an unsupported version, a progress token: answered by
    the entry exactly as without the lane, and none taken."""
    servers = {"a": fixture("--name", "a"), "w": wire("w")}
    async with engine_with(tmp_path, servers) as engine, endpoint(engine) as served:
        lane = engine.router.fast_lane
        region = {"region": "eu-west-1"}
        unsupported = envelope(**{types.PROTOCOL_VERSION_META_KEY: "2099-01-01"})
        cases: list[tuple[tuple[Any, ...], dict[str, str]]] = [
            ((1, "echo", {"text": "x"}), {"Mcp-Name": "add"}),
            ((2, "routed", region), {"Mcp-Param-Region": "us-east-2"}),
            ((3, "echo", {"text": "x"}, unsupported), {"MCP-Protocol-Version": "2099-01-01"}),
            ((4, "echo", {"text": "x"}, envelope(progressToken="p")), {}),
        ]
        for enabled in (True, False):
            lane.enabled = enabled
            answers = [(await served.call(*args, **headers)).comparable() for args, headers in cases]
            if enabled:
                with_lane = answers
            assert lane.ahead == 0
        lane.enabled = True
        assert with_lane == answers
        assert [a[0] for a in answers] == [400, 400, 400, 200]
        assert [a[2][-1].get("error", {}).get("code") for a in answers[:3]] == [-32020, -32020, -32022]
        twice = served.request(5, "echo", {"text": "x"})
        twice.headers = httpx2.Headers([*twice.headers.multi_items(), ("Mcp-Name", "echo")])
        answer = await served.http.send(twice)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == -32020
        assert lane.ahead == 0
        assert (await served.call(6, "echo", {"text": "x"})).status == 200 and lane.ahead == 1
