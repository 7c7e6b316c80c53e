"""A 2026-07-28 client's calls on the lane ahead of the SDK's session (`proxy/wire_lane`), over the
pipes `serve --stdio` serves, with real subprocess servers and the SDK's client (`mode="auto"`):
each request's envelope is the call's (the server is told the calling client's capabilities; the
logs of the call reach it at the level the request asked), trace context passes, a cancelled call
is cancelled, and the answer is, byte for byte, the one the session writes for the same call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from mcpmanager.core.engine.engine import Engine
from tests.e2e.test_beside_messages import CLIENT_TRACE, wire
from tests.e2e.test_fast_lane import engine_with
from tests.e2e.test_wire_lane import Wire
from tests.e2e.test_wire_lane import wire as on_pipes
from tests.helpers.asking_clients import Answering
from tests.helpers.clients import text_of
from tests.helpers.conformance import conformance_fixture
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import fixture
from tests.helpers.piped import connected

MODERN = "2026-07-28"


def envelope(**extra: Any) -> dict[str, Any]:
    return {
        types.PROTOCOL_VERSION_META_KEY: MODERN,
        types.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
        types.CLIENT_CAPABILITIES_META_KEY: {},
        **extra,
    }


async def test_a_2026_client_s_capabilities_reach_the_server_through_the_lane(tmp_path: Path) -> None:
    """The server is told the capabilities of the client behind each call (one that declared
    sampling, then one that did not), in the call's own envelope."""
    async with engine_with(tmp_path, {"w": wire("w")}) as engine:
        lane = engine.router.fast_lane
        for sampling in (True, False):
            options = Answering().callbacks(sampling=sampling)
            async with connected(engine, "pipe", mode="auto", cache=None, **options) as client:
                assert client.protocol_version == MODERN
                await client.list_tools()  # (the lane learns the stream from a request the session handles)
                ahead = lane.ahead
                result = await client.call_tool("capabilities", {})
                assert lane.ahead == ahead + 1
                told = json.loads(text_of(result))
                assert ("sampling" in told) is sampling and "elicitation" in told


async def test_a_2026_client_s_call_logs_at_the_level_it_asked_through_the_lane(tmp_path: Path) -> None:
    """The server's logs during the call reach the client only at or above the request's level."""
    async with engine_with(tmp_path, {"old": conformance_fixture("--handshake-only")}) as engine:
        lane = engine.router.fast_lane
        for level, expected in (("info", 3), ("warning", 0)):
            answering = Answering()
            options: dict[str, Any] = {"log_level": level, **answering.callbacks()}
            async with connected(engine, "pipe", mode="auto", cache=None, **options) as client:
                await client.list_tools()
                ahead = lane.ahead
                await client.call_tool("test_tool_with_logging", {})
                assert lane.ahead == ahead + 1
                # A later call's answer comes after any log of the first one (they ride one pipe).
                await client.call_tool("test_simple_text", {})
                assert len(answering.logs) == expected, (level, answering.logs)


async def test_trace_context_passes_through_the_lane(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"w": wire("w")}) as engine:
        lane = engine.router.fast_lane
        async with connected(engine, "pipe", mode="auto", cache=None) as client:
            await client.list_tools()
            ahead = lane.ahead
            result = await client.call_tool("trace", {}, meta=dict(CLIENT_TRACE))  # type: ignore[arg-type]
            assert lane.ahead == ahead + 1
            assert json.loads(text_of(result)) == CLIENT_TRACE


async def test_a_2026_client_s_cancelled_call_is_cancelled_at_the_server(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:
        log = engine.downstreams["a"].log
        lane = engine.router.fast_lane
        async with on_pipes(engine) as wire_:
            await wire_.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": envelope()}})
            assert "result" in await wire_.answer_to(1)
            ahead = lane.ahead
            params = {"name": "sleep", "arguments": {"seconds": 60}, "_meta": envelope()}
            await wire_.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
            await wait_for(lambda: any("sleeping 60" in line for line in log.tail(100)), 10)
            assert lane.ahead == ahead + 1
            await wire_.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
            await wait_for(lambda: any("cancelled sleep" in line for line in log.tail(100)), 10)
            params = {"name": "echo", "arguments": {"text": "still here"}, "_meta": envelope()}
            await wire_.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
            answer = await wire_.answer_to(3)  # (nothing was written for the cancelled call: 2 never comes)
            assert answer["result"]["structuredContent"] == {"text": "still here"}


async def test_the_lane_s_answer_to_a_2026_client_is_the_session_s_byte_for_byte(tmp_path: Path) -> None:
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine:
        lane = engine.router.fast_lane
        written = await _answers(engine, lane_enabled=True)
        assert lane.ahead == 3
        assert written == await _answers(engine, lane_enabled=False)
        assert lane.ahead == 3


async def _answers(engine: Engine, lane_enabled: bool) -> list[bytes]:
    """The lines the engine writes for three calls of a 2026-07-28 client (an echo, a failure, a
    call with trace context and a log level)."""
    engine.router.fast_lane.enabled = lane_enabled
    calls = [
        {"name": "echo", "arguments": {"text": "héllo"}, "_meta": envelope()},
        {"name": "fail", "arguments": {"message": "no"}, "_meta": envelope()},
        {
            "name": "add",
            "arguments": {"a": 1, "b": 2},
            "_meta": envelope(**CLIENT_TRACE, **{types.LOG_LEVEL_META_KEY: "debug"}),
        },
    ]
    lines: list[bytes] = []
    async with on_pipes(engine) as wire_:
        await wire_.send({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": envelope()}})
        await wire_.answer_to(0)
        for number, params in enumerate(calls, 1):
            await wire_.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
            lines.append(await _raw_answer(wire_, number))
    engine.router.fast_lane.enabled = True
    return lines


async def _raw_answer(line: Wire, request_id: int) -> bytes:
    """The bytes of the response to `request_id` (a notification before it is skipped)."""
    while True:
        with anyio.fail_after(20):
            raw = await line.reader.readline()
        assert raw, "the engine closed its output"
        message = json.loads(raw)
        if message.get("id") == request_id and "method" not in message:
            return raw


async def test_an_envelope_the_sdk_refuses_is_left_to_the_session(tmp_path: Path) -> None:
    """An unsupported version, a log level that is none, a progress token: the session's to answer,
    as it answers them without the lane."""
    async with engine_with(tmp_path, {"a": fixture("--name", "a")}) as engine, on_pipes(engine) as line:
        lane = engine.router.fast_lane
        await line.send({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": envelope()}})
        await line.answer_to(0)
        echo = {"name": "echo", "arguments": {"text": "x"}}
        unsupported = envelope(**{types.PROTOCOL_VERSION_META_KEY: "2099-01-01"})
        await line.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**echo, "_meta": unsupported}})
        assert (await line.answer_to(1))["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
        shouting = envelope(**{types.LOG_LEVEL_META_KEY: "loud"})
        await line.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**echo, "_meta": shouting}})
        # (the session's middleware lane answers it, ahead of the SDK's surface validation, as before)
        assert (await line.answer_to(2))["result"]["structuredContent"] == {"text": "x"}
        assert lane.ahead == 0
        progress = envelope(progressToken="p")
        await line.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {**echo, "_meta": progress}})
        assert (await line.answer_to(3))["result"]["structuredContent"] == {"text": "x"}
        assert lane.ahead == 0
        await line.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {**echo, "_meta": envelope()}})
        assert (await line.answer_to(4))["result"]["structuredContent"] == {"text": "x"}
        assert lane.ahead == 1
