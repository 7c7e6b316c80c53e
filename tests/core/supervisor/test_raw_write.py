"""Tool calls sent as bytes (`raw_calls`) are written to the server's stdin through asyncio's own
writer, not anyio's wrapper, which yields to the loop after every write (one more loop turn per
call). The writer is reached through anyio's private `_stream`: an anyio that moves it fails here."""

from __future__ import annotations

import asyncio
import sys

import anyio
import pytest

from mcpmanager.core.supervisor.process import ChildProcess, _asyncio_writer
from mcpmanager.core.supervisor.stderr_log import StderrLog

# Tells its stderr each line it reads; ends when stdin ends or says "bye".
TELLS = """
import sys
for line in sys.stdin:
    print("got", line.strip(), file=sys.stderr, flush=True)
    if "bye" in line:
        break
"""


async def started(script: str) -> ChildProcess:
    child = ChildProcess(sys.executable, ["-c", script], {}, None, StderrLog(None), grace=1)
    await child.start()
    return child


async def test_anyio_s_stdin_wraps_the_asyncio_writer_we_write_to() -> None:
    process = await anyio.open_process([sys.executable, "-c", "pass"])
    async with process:
        assert process.stdin is not None
        assert isinstance(_asyncio_writer(process.stdin), asyncio.StreamWriter)


async def test_a_raw_line_reaches_the_server_without_a_loop_turn_of_its_own() -> None:
    child = await started(TELLS)
    async with child.transport():
        turns = 0

        async def count() -> None:
            nonlocal turns
            while True:
                await asyncio.sleep(0)
                turns += 1

        counter = asyncio.get_running_loop().create_task(count())
        await asyncio.sleep(0)  # (the counter is running)
        before = turns
        await child._write_raw(b'{"jsonrpc": "2.0", "method": "notifications/ping-1"}\n')
        assert turns == before  # the write did not yield to the loop (anyio's send does, once)
        counter.cancel()
        await child._write_raw(b"bye\n")
        with anyio.fail_after(10):
            await child.stderr_closed.wait()
    told = child.log.tail(50, stderr_only=True)
    assert told[-2:] == ['got {"jsonrpc": "2.0", "method": "notifications/ping-1"}', "got bye"]


async def test_writing_to_a_server_that_closed_its_input_is_an_error_not_a_silent_loss() -> None:
    child = await started("import os, time\nos.close(0)\ntime.sleep(30)")
    async with child.transport():
        with anyio.fail_after(10):
            with pytest.raises((anyio.BrokenResourceError, OSError)):
                for _ in range(200):  # the first writes may land in the pipe before it is seen closed
                    await child._write_raw(b"x" * 65536 + b"\n")
                    await anyio.sleep(0.01)
