"""`Output`, the reader of a stdio server's stdout: lines are handled in the read callback while
nothing waits for the session, and in order after a message that does; reading pauses while the
queue is long; `feed_from` (where the loop cannot read the pipe) feeds it the same way. The e2e
tests run it under real servers; these pin its order and flow rules."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from mcpmanager.core.supervisor.output import HIGH_WATER, Output, feed_from
from mcpmanager.core.supervisor.process import ChildProcess, SpawnError
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.system.line_framer import Overlong
from tests.core.supervisor.test_stop_while_spawning import children_with


class Recorder:
    """Lines starting with `s` are the session's (a notification naming the line); others are
    answers a raw call takes. Records the order lines were handled in."""

    def __init__(self) -> None:
        self.handled: list[str] = []

    def __call__(self, line: bytes | Overlong) -> SessionMessage | None:
        assert isinstance(line, bytes)
        text = line.decode()
        self.handled.append(text)
        if not text.startswith("s"):
            return None
        return SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method=text))


class Reading(asyncio.ReadTransport):
    def __init__(self) -> None:
        super().__init__()
        self.paused: list[bool] = []

    def pause_reading(self) -> None:
        self.paused.append(True)

    def resume_reading(self) -> None:
        self.paused.append(False)


def method(message: SessionMessage) -> str:
    assert isinstance(message.message, types.JSONRPCNotification)
    return message.message.method


async def test_an_answer_after_a_session_message_waits_until_that_message_was_taken() -> None:
    record = Recorder()
    output = Output(record)
    output.data_received(b"r0\ns1\nr1\ns2\nr2")  # (r2's line is not complete yet)
    assert record.handled == ["r0", "s1"]  # r1 stays queued behind s1, unparsed
    assert method(await output.next()) == "s1"
    assert record.handled == ["r0", "s1"]  # s1 is being handed over: nothing after it yet
    output.data_received(b"\n")
    assert method(await output.next()) == "s2"  # (s1 handed over: r1 is handled on the way)
    assert record.handled == ["r0", "s1", "r1", "s2"]
    waiting = asyncio.ensure_future(output.next())
    await asyncio.sleep(0)
    assert record.handled[-1] == "r2"  # handled once s2 was taken
    output.data_received(b"r3\n")
    assert record.handled[-1] == "r3"  # nothing waits for the session: at once, in the callback
    output.connection_lost(None)
    with pytest.raises(anyio.EndOfStream):
        await waiting


async def test_reading_pauses_while_the_session_lags_and_resumes_at_half() -> None:
    output = Output(Recorder())
    reading = Reading()
    output.connection_made(reading)
    output.data_received(b"".join(b"s%d\n" % n for n in range(HIGH_WATER + 5)))
    assert reading.paused == [True]
    taken = [method(await output.next()) for _ in range(HIGH_WATER // 2 + 5)]
    assert reading.paused == [True, False]
    assert taken == [f"s{n}" for n in range(HIGH_WATER // 2 + 5)]  # in order


class Chunks(anyio.abc.ByteReceiveStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def aclose(self) -> None:
        self.chunks = []


async def test_fed_from_a_stream_it_keeps_the_order_and_holds_the_stream_back_while_full() -> None:
    record = Recorder()
    output = Output(record)
    lines = [b"s%d\n" % n for n in range(HIGH_WATER * 2)]
    source = Chunks([b"r0\ns", b"a\nr1\n", *lines])
    async with anyio.create_task_group() as tg:
        tg.start_soon(feed_from, output, source)
        await anyio.wait_all_tasks_blocked()
        assert source.chunks  # held back: the queue is full and nobody takes from it
        taken = []
        with anyio.fail_after(10):
            while True:
                try:
                    taken.append(method(await output.next()))
                except anyio.EndOfStream:
                    break
    assert taken == ["sa", *(f"s{n}" for n in range(HIGH_WATER * 2))]
    assert record.handled[:3] == ["r0", "sa", "r1"]


async def test_an_answer_arriving_while_a_message_is_handed_over_waits_for_the_hand_over() -> None:
    record = Recorder()
    output = Output(record)
    output.data_received(b"s1\n")
    assert method(await output.next()) == "s1"  # (the pump now awaits the session taking it)
    output.data_received(b"r1\n")
    assert record.handled == ["s1"]  # not before s1 is with the session
    waiting = asyncio.ensure_future(output.next())  # (the pump asks again: s1 was taken)
    await asyncio.sleep(0)
    assert record.handled == ["s1", "r1"]
    output.connection_lost(None)
    with pytest.raises(anyio.EndOfStream):
        await waiting


async def test_a_child_whose_output_cannot_be_read_is_stopped_not_left_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found in review: if reading the pipe could not start, `start` raised with the child running,
    and nobody stopped it."""
    marker = f"unread-{uuid.uuid4().hex}"

    async def refused(self: ChildProcess, fd: int) -> asyncio.ReadTransport:
        os.close(fd)
        raise OSError("the loop cannot read this pipe")

    monkeypatch.setattr(ChildProcess, "_read_output", refused)
    child = ChildProcess(sys.executable, ["-c", f"import sys  # {marker}\nsys.stdin.read()"], {}, None, StderrLog(None))
    with pytest.raises(SpawnError, match="the loop cannot read this pipe"):
        await child.start()
    assert children_with(marker) == []
