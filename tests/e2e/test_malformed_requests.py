"""A client's request that is no JSON-RPC message (an escape that is half of a UTF-16 pair, params
that are not an object, a wrong `jsonrpc`) gets an error with its id at once, over `serve --stdio`
and through `connect` (the engine's local socket, or its HTTP endpoint with `--http`), instead of
no answer, which left the client waiting for its own timeout. A line nobody can parse, or a
notification, still gets none (an id guessed from the text could end another call), and the engine,
and `connect`, serve on after each."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.clients import bridge_env
from tests.helpers.engines import stop_engines
from tests.helpers.fixture_servers import engine_home

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
CALL = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a__echo","arguments":{"text":%s}}}'


class Lines:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout

    async def send(self, line: str) -> None:
        self.stdin.write(line.encode() + b"\n")
        await self.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        """The next response (notifications the engine sends meanwhile skipped)."""
        while True:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(self.stdout.readline(), 30))
            if "id" in message:
                return message


@asynccontextmanager
async def raw_session(command: list[str], home: Path) -> AsyncIterator[Lines]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpmanager",
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=bridge_env(home),
    )
    lines = Lines(process)
    try:
        await lines.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}))
        assert (await lines.answer())["id"] == 0
        await lines.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for _ in range(300):  # until `a` is ready and its echo answers
            await lines.send(CALL % (1, '"warm"'))
            if "result" in (answered := await lines.answer()) and not answered["result"].get("isError"):
                break
            await asyncio.sleep(0.1)
        yield lines
    finally:
        lines.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            stop_engines(home)


COMMANDS = {
    "serve --stdio": ["serve", "--stdio", "--mode", "direct"],
    "connect": ["connect", "--mode", "direct"],
    "connect --http": ["connect", "--mode", "direct", "--http"],  # the SDK's 400, turned into an error by id
}
NOT_JSON = {"serve --stdio": "not strict JSON", "connect": "not strict JSON", "connect --http": "Parse error"}


@pytest.mark.parametrize("via", COMMANDS)
async def test_a_malformed_request_is_refused_by_its_id_and_the_engine_serves_on(tmp_path: Path, via: str) -> None:
    home = engine_home(tmp_path / "home")
    async with raw_session(COMMANDS[via], home) as lines:
        await lines.send(CALL % (2, '"half a pair: \\ud800"'))
        refused = await lines.answer()
        assert refused["id"] == 2 and refused["error"]["code"] == -32600, refused
        assert NOT_JSON[via] in refused["error"]["message"] and "column" in refused["error"]["message"]

        await lines.send('{"jsonrpc":"2.0","id":"three","method":"tools/call","params":"a__echo"}')
        refused = await lines.answer()
        assert refused["id"] == "three" and refused["error"]["code"] == -32600, refused
        assert "params" in refused["error"]["message"], refused

        await lines.send('{"jsonrpc":"1.0","id":4,"method":"tools/list"}')
        refused = await lines.answer()
        assert refused["id"] == 4 and "jsonrpc" in refused["error"]["message"], refused

        # No answer for what names no request (cut short, or a notification): the next one is 5's.
        await lines.send('{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":')
        await lines.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"\\ud800"}')
        await lines.send(CALL % (5, '"still here"'))
        served = await lines.answer()
        assert served["id"] == 5 and served["result"]["content"][0]["text"] == "still here", served

        # Ids no request can carry, and cancellations of nothing: `connect` ended on each with a
        # traceback (a list as a dict key; params that are no object on --http). Nobody waits on them.
        await lines.send('{"jsonrpc":"2.0","id":[1],"method":"ping"}')
        await lines.send('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":"x"}')
        await lines.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[7]}}')
        await lines.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}')
        await lines.send(CALL % (6, '"and still"'))
        served = await lines.answer()
        assert served["id"] == 6 and served["result"]["content"][0]["text"] == "and still", served

        # Found by fuzzing: JSON nested past the parser's depth ended `connect`; a second `initialize`
        # (refused) became the handshake `connect` replays, and over --http a second `initialized`
        # opened a second event stream, refused (409) as a lost engine, so that refused handshake
        # was replayed and every later request was answered "Missing session ID".
        await lines.send("[" * 20_000 + "]" * 20_000)
        await lines.send('{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"bogus":true}}')
        assert "error" in await lines.answer()
        await lines.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for probe in range(8, 11):
            await lines.send(CALL % (probe, '"after all that"'))
            served = await lines.answer()
            assert served["id"] == probe and served["result"]["content"][0]["text"] == "after all that", served
            await asyncio.sleep(0.2)
