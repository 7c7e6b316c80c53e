"""The fast lane ahead of the SDK's session (`proxy/wire_lane`), spoken to raw, with real subprocess
servers: as lines over the pipes `serve --stdio` serves (what a client may write that the lane must
leave to the session, answered exactly as the SDK answers it; calls written all at once; a huge
answer; a client that leaves with a call running) and as POSTs to the endpoint `serve --http` serves
(a call cancelled, a session closed under a call). The SDK's own client over both, compared call
by call with the full path, is in test_fast_lane."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2

from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.serve.http import serve_http
from tests.e2e.test_fast_lane import SCRIPTED, engine_with
from tests.e2e.test_json_first import Session, events
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import fixture
from tests.helpers.piped import TOKEN, engine_on_pipes

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


class Wire:
    """The client's ends of the pipes: JSON lines out, JSON lines in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def send(self, *messages: dict[str, Any]) -> None:
        self.writer.write(b"".join(json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in messages))
        await self.writer.drain()

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(20):
            line = await self.reader.readline()
        assert line, "the engine closed its output"
        message: dict[str, Any] = json.loads(line)
        return message

    async def answer_to(self, request_id: object) -> dict[str, Any]:
        """The response to `request_id` (what comes before it, such as log messages, is skipped)."""
        while (message := await self.receive()).get("id") != request_id or "method" in message:
            pass
        return message

    async def hello(self) -> None:
        await self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO})
        assert "result" in await self.answer_to(0)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        assert "result" in await self.answer_to("list")


@asynccontextmanager
async def wire(engine: Engine) -> AsyncIterator[Wire]:
    async with engine_on_pipes(engine) as (read, write):
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read, "rb", buffering=0)
        )
        out, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(write, "wb", buffering=0)
        )
        try:
            yield Wire(reader, asyncio.StreamWriter(out, protocol, None, loop))
        finally:
            out.close()  # end of input: the engine stops serving
            transport.close()


def call(request_id: object, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


async def test_what_the_lane_must_leave_to_the_session_is_answered_as_the_sdk_answers_it(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, wire(engine) as line:
        lane = engine.router.fast_lane
        # Before the handshake: the SDK's refusal, not a result.
        await line.send(call(1, "echo", {"text": "too early"}))
        early = await line.answer_to(1)
        assert "error" in early and lane.taken == 0
        # Written with `initialize`, read while the SDK still handles it (the lane has seen the
        # connection by then): the SDK accepts a request once `initialize` is recorded, and so the
        # call is answered, whichever way it went.
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}
        await line.send(hello, call(11, "echo", {"text": "right after"}))
        assert "result" in await line.answer_to(0)
        assert (await line.answer_to(11))["result"]["structuredContent"] == {"text": "right after"}
        await line.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await line.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        assert "result" in await line.answer_to("list")
        # A 2026-07-28 envelope on a handshake-era connection: refused, as the SDK refuses it.
        envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        await line.send(call(2, "echo", {"text": "enveloped"}, _meta=envelope))
        refused = await line.answer_to(2)
        assert refused["error"]["code"] == -32600 and "handshake protocol era" in refused["error"]["message"]
        ahead = lane.ahead
        # Not JSON-RPC 2.0, with an id: refused by that id at once (the SDK's session answered nothing,
        # and its client waited for its timeout), before the next call's answer.
        await line.send({"jsonrpc": "1.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}})
        # A plain call is taken ahead of the session, with a string id or an integer one.
        await line.send(call("four", "echo", {"text": "plain"}))
        three = await line.receive()
        assert three["id"] == 3 and three["error"]["code"] == -32600 and "jsonrpc" in three["error"]["message"]
        four = await line.receive()
        assert four["id"] == "four"
        await line.send(call(5, "echo", {"text": "plain too"}))
        five = await line.answer_to(5)
        assert four["result"]["structuredContent"] == {"text": "plain"}
        assert five["result"]["structuredContent"] == {"text": "plain too"}
        assert lane.ahead == ahead + 2 and four["jsonrpc"] == "2.0"


async def test_cancellations_are_matched_as_the_sdk_matches_them(tmp_path: Path) -> None:
    """Found in review: an id no dict can hold crashed the transport (and so `serve --stdio`), and a
    string naming an integer id ("7" for 7, which the SDK matches) cancelled nothing."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, wire(engine) as line:
        log = engine.downstreams["a"].log
        await line.hello()
        await line.send(call(7, "sleep", {"seconds": 60}))
        await wait_for(lambda: any("sleeping 60" in entry for entry in log.tail(100)), 10)
        for strange in ([7], {"id": 7}, True, 7.0, None):
            await line.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": strange}})
        await line.send(call(8, "echo", {"text": "served"}))
        served = await line.answer_to(8)
        assert served["result"]["structuredContent"] == {"text": "served"}
        assert not any("cancelled sleep" in entry for entry in log.tail(100))  # none of those named call 7
        await line.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "7"}})
        await wait_for(lambda: any("cancelled sleep" in entry for entry in log.tail(100)), 10)
        await line.send(call(9, "echo", {"text": "after"}))
        after = await line.receive()  # nothing for the cancelled call comes first: a pipe answers it with nothing
        assert after["id"] == 9 and engine.router.fast_lane.ahead == 3


async def test_calls_written_all_at_once_are_each_answered_once(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, wire(engine) as line:
        await line.hello()
        await line.send(*(call(n, "echo", {"text": f"call {n}"}) for n in range(1, 201)))
        answers: dict[object, dict[str, Any]] = {}
        while len(answers) < 200:
            message = await line.receive()
            assert message["id"] not in answers
            answers[message["id"]] = message
        assert all(answers[n]["result"]["structuredContent"] == {"text": f"call {n}"} for n in range(1, 201))
        assert engine.router.fast_lane.ahead == 200


async def test_a_huge_answer_arrives_whole(tmp_path: Path) -> None:
    text = "ü" * (6 * 1024 * 1024)  # over the size the transport writes in slices
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, wire(engine) as line:
        await line.hello()
        await line.send(call(1, "echo", {"text": text}), {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        first, second = await line.receive(), await line.receive()
        by_id = {first["id"]: first, second["id"]: second}
        assert by_id[1]["result"]["structuredContent"] == {"text": text}
        assert by_id[2]["result"] == {}
        assert engine.router.fast_lane.ahead == 1


async def test_a_client_that_leaves_mid_call_has_the_call_cancelled_at_the_server(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:
        log = engine.downstreams["a"].log
        async with wire(engine) as line:
            await line.hello()
            await line.send(call(1, "sleep", {"seconds": 60}))
            await wait_for(lambda: any("sleeping 60" in entry for entry in log.tail(100)), 10)
            assert engine.router.fast_lane.ahead == 1
        # The client closed its end: serving stopped (the context waited for it) and the server was told.
        await wait_for(lambda: any("cancelled sleep" in entry for entry in log.tail(100)), 10)
        assert engine.router.callers.on("a") == []


@asynccontextmanager
async def http_session(engine: Engine) -> AsyncIterator[Session]:
    """A handshake-era session with the engine's `serve --http` code, in this process, spoken raw."""
    urls: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, engine.router, 0, urls.append, token=TOKEN))
        await wait_for(lambda: bool(urls), 10)
        async with httpx2.AsyncClient(timeout=30) as http:
            client = Session(http, urls[0], TOKEN)
            opened = await client.post("initialize", HELLO)
            client.session_id = opened.headers["mcp-session-id"]
            assert (await client.notify("notifications/initialized")).status_code == 202
            yield client
        tg.cancel_scope.cancel()


@asynccontextmanager
async def sleeping(engine: Engine, client: Session) -> AsyncIterator[list[httpx2.Response]]:
    """A call that sleeps a minute, POSTed and running at its server: its answer, once the POST ends,
    in the list (leaving waits for it)."""
    log = engine.downstreams["a"].log
    answers: list[httpx2.Response] = []

    async def call() -> None:
        answers.append(await client.post("tools/call", {"name": "sleep", "arguments": {"seconds": 60}}))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await wait_for(lambda: any("sleeping 60" in entry for entry in log.tail(100)), 10)
        yield answers


async def test_a_call_cancelled_over_http_is_cancelled_at_the_server_and_its_post_ended(tmp_path: Path) -> None:
    """As the SDK's transport ends a cancelled request of its session's (found in review: the lane's
    POST stayed open, then streamed pings for as long as the session lived)."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, http_session(engine) as client:
        log = engine.downstreams["a"].log
        async with sleeping(engine, client) as answers:
            assert engine.router.fast_lane.ahead == 1
            # The id as a string: the SDK matches "7" to 7, and so must the lane.
            params = {"requestId": str(client.next_id)}
            body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
            cancelled = await client.http.post(client.url, content=json.dumps(body), headers=client.headers())
            assert cancelled.status_code == 202
        assert answers[0].json()["error"] == {"code": -32800, "message": "Request cancelled"}
        await wait_for(lambda: any("cancelled sleep" in entry for entry in log.tail(100)), 10)
        assert engine.router.callers.on("a") == []
        answer = await client.post("tools/call", {"name": "echo", "arguments": {"text": "still here"}})
        assert answer.json()["result"]["structuredContent"] == {"text": "still here"}
        assert engine.router.fast_lane.ahead == 2


def awaiting(task: asyncio.Task[Any], name: str) -> bool:
    """Whether `task` is suspended somewhere inside a coroutine called `name`."""
    coro: Any = task.get_coro()
    while coro is not None:
        if getattr(coro, "__name__", None) == name:
            return True
        coro = getattr(coro, "cr_await", None)
    return False


async def test_an_id_reused_in_flight_over_http_leaves_each_post_its_own_answer(tmp_path: Path) -> None:
    """Found in review: a lane call's task told "answered" to the stream the id mapped to at the end,
    which a second POST reusing the id (the SDK's, a protocol violation) had replaced: that POST's
    stream opened with mcpmanager's own marker, and the first POST's task waited for ever."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, http_session(engine) as client:
        answers: dict[str, httpx2.Response] = {}

        async def post(tag: str, seconds: float) -> None:
            call = {"name": "sleep", "arguments": {"seconds": seconds}}
            body = {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": call}
            answers[tag] = await client.http.post(client.url, content=json.dumps(body), headers=client.headers())

        async with anyio.create_task_group() as tg:
            tg.start_soon(post, "first", 1)
            await wait_for(lambda: engine.router.fast_lane.ahead == 1, 10)
            tg.start_soon(post, "second", 1.5)
        assert answers["first"].headers["content-type"] == "application/json"
        assert answers["first"].json()["id"] == 99 and "result" in answers["first"].json()
        assert "mcpmanager/answered" not in answers["second"].text
        await anyio.sleep(0.2)  # (the POSTs' tasks end once their answers are written)
        assert [t for t in asyncio.all_tasks() if awaiting(t, "_answer")] == []


async def test_a_session_closed_mid_call_over_http_has_the_call_cancelled_at_the_server(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, http_session(engine) as client:
        log = engine.downstreams["a"].log
        async with sleeping(engine, client) as answers:
            closed = await client.http.delete(client.url, headers=client.headers())
            assert closed.status_code == 200
        # The call's POST is told, as for a call the session was running, and the server is told too.
        assert answers[0].status_code == 500
        assert "Session terminated before the request completed" in answers[0].text
        await wait_for(lambda: any("cancelled sleep" in entry for entry in log.tail(100)), 10)
        assert engine.router.fast_lane.ahead == 1 and engine.router.callers.on("a") == []


async def test_what_a_server_logs_before_its_answer_reaches_the_wire_before_the_answer(tmp_path: Path) -> None:
    """On the pipe the session's messages and the lane's answers share the output; an answer that
    follows a log must not overtake it (found in review: nothing but scheduling kept the order)."""
    async with engine_with(tmp_path, {"r": SCRIPTED}) as engine, wire(engine) as line:
        await line.hello()
        for n in range(1, 21):
            await line.send(call(n, "logs", {"x": "1"}))
            seen = []
            while "id" not in (message := await line.receive()):
                seen.append(message["params"]["data"])
            assert message["id"] == n and seen == ["log 0", "log 1", "log 2"], (n, seen)
        assert engine.router.fast_lane.ahead == 20


async def test_what_a_server_logs_before_its_answer_rides_the_call_s_post_before_it(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"r": SCRIPTED}) as engine, http_session(engine) as client:
        for _ in range(10):
            answer = await client.post("tools/call", {"name": "logs", "arguments": {"x": "1"}})
            assert answer.headers["content-type"].startswith("text/event-stream")
            sent = events(answer.text)
            assert [m.get("params", {}).get("data") for m in sent[:3]] == ["log 0", "log 1", "log 2"]
            assert sent[3]["id"] == client.next_id and "result" in sent[3] and len(sent) == 4
        assert engine.router.fast_lane.ahead == 10
