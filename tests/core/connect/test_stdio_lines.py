"""`connect` reads its stdin and the engine's socket as lines through `Lines`, the one framer in a
protocol: lines split anywhere come out whole with their newlines, a line of any length (past the
64 MiB asyncio's streams read ahead) comes out whole, a last line without a newline comes last, a
broken connection raises once the lines before it were taken, and a reader that falls behind
pauses the transport."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpmanager.core.connect import stdio_lines
from mcpmanager.core.connect.stdio_lines import Lines


class Transport(asyncio.ReadTransport):
    def __init__(self) -> None:
        super().__init__()
        self.paused = False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


async def taken(lines: Lines) -> list[bytes]:
    return [line async for line in lines]


async def test_lines_split_anywhere_come_out_whole_with_their_newlines() -> None:
    lines = Lines()
    for chunk in (b'{"a": 1}\n{"b":', b" 2}\n", b"\n", b'{"c": 3}\n{"d": 4}\n{"e"', b": 5}"):
        lines.data_received(chunk)
    lines.eof_received()
    assert await taken(lines) == [b'{"a": 1}\n', b'{"b": 2}\n', b"\n", b'{"c": 3}\n', b'{"d": 4}\n', b'{"e": 5}']


async def test_a_line_longer_than_asyncio_reads_ahead_comes_out_whole() -> None:
    lines = Lines()
    piece = b"x" * (1 << 20)
    for _ in range(65):  # 65 MiB with no newline: asyncio's streams stop at 64 MiB (LimitOverrunError)
        lines.data_received(piece)
    lines.data_received(b"\nnext\n")
    lines.eof_received()
    first, second = await taken(lines)
    assert len(first) == 65 * (1 << 20) + 1 and first.endswith(b"x\n") and second == b"next\n"


async def test_a_reader_waits_for_a_line_and_gets_it_as_it_arrives() -> None:
    lines = Lines()
    waiting = asyncio.ensure_future(anext(lines))
    await asyncio.sleep(0)
    lines.data_received(b"par")
    await asyncio.sleep(0)
    assert not waiting.done()
    lines.data_received(b"t\n")
    assert await asyncio.wait_for(waiting, 5) == b"part\n"


async def test_a_broken_connection_raises_after_the_lines_it_brought() -> None:
    lines = Lines()
    lines.connection_made(Transport())
    lines.data_received(b"one\ntw")
    lines.connection_lost(ConnectionResetError("reset"))
    assert await anext(lines) == b"one\n"
    assert await anext(lines) == b"tw"
    with pytest.raises(ConnectionResetError):
        await anext(lines)
    assert await anext(lines, None) is None


async def test_reading_pauses_while_the_lines_wait_and_resumes_once_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio_lines, "HIGH_WATER", 100)
    monkeypatch.setattr(stdio_lines, "LOW_WATER", 50)
    transport, lines = Transport(), Lines()
    lines.connection_made(transport)
    for _ in range(6):
        lines.data_received(b"y" * 19 + b"\n")
    assert transport.paused
    for _ in range(3):
        await anext(lines)
    assert transport.paused  # 60 bytes still wait
    await anext(lines)
    assert not transport.paused
    lines.data_received(b"z" * 120)  # a line not yet ended holds nothing back: it cannot be taken
    assert not transport.paused
    lines.data_received(b"\n")
    assert transport.paused
    assert [len(await anext(lines)) for _ in range(3)] == [20, 20, 121]
    assert not transport.paused


def test_connect_stays_light_the_framer_brings_no_sdk_nor_pydantic(tmp_path: Path) -> None:
    # The command line as a client runs it, up to its first look for an engine (none runs in this
    # home): everything `connect` imports before it relays, the CLI's parser with every command's.
    code = (
        "import sys\n"
        "from mcpmanager.cli import main\n"
        "status = main(['connect', '--no-start'])\n"
        "heavy = {'mcp', 'mcp_types', 'pydantic', 'pydantic_core'}\n"
        "print(status, sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    env = {**os.environ, "MCPMANAGER_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env)
    assert done.stdout.strip() == "2 []", done.stderr  # a client waits for connect to start
    assert "no mcpmanager engine is running" in done.stderr
