"""`mcpmanager connect` when things go wrong, over each link (the engine's local socket, and its HTTP
endpoint with `--http`), driven line by line as a client drives it: an answer larger than the
socket relay reads at once, an engine killed (SIGKILL, no clean-up) that `connect` itself started, a
request sent while the engine stops, and a client that leaves while no engine can be reached."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.clients import bridge_env
from tests.helpers.engine_stop import endpoint_closed, refuses_new_requests
from tests.helpers.engines import engine_pid, engines, pid_alive, stop_engines, wait_for
from tests.helpers.fixture_servers import FAST, engine_home, fixture
from tests.helpers.serving import spawn_serve_http

LINKS = ["socket", "http"]
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
READ_AHEAD = 64 << 20  # bytes asyncio's streams read ahead (the relay frames lines itself: none is cut there)


@pytest.fixture
def user(tmp_path: Path) -> Iterator[Path]:
    """The e2e `user` home, its engines stopped after with their servers killed: the engine that
    replaces a stopped one here has the same `--stubborn` server, which would hold its stop for the
    whole grace (twice 2 s) when the test is over."""
    home = engine_home(tmp_path / "home")
    try:
        yield home
    finally:
        stop_engines(home, kill_servers=True)


class Bridge:
    """`mcpmanager connect` as a subprocess: JSON-RPC lines written to it, its answers kept by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self._reading = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, home: Path, link: str, *args: str) -> Bridge:
        command = ["-m", "mcpmanager", "connect", "--mode", "direct", *args, *(["--http"] if link == "http" else [])]
        with (home / "connect-stderr.log").open("ab") as errlog:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                *command,
                env=bridge_env(home),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                limit=4 * READ_AHEAD,  # this test's reading of a huge answer is not what is tested
            )
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.answers[message["id"]] = message

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, id: int, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        with anyio.fail_after(timeout):
            while id not in self.answers:
                await anyio.sleep(0.02)
        return self.answers.pop(id)

    async def handshake(self) -> None:
        await self.request(0, "initialize", 60, **INITIALIZE)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, id: int, tool: str, timeout: float = 30, **arguments: Any) -> dict[str, Any]:
        answer = await self.request(id, "tools/call", timeout, name=tool, arguments=arguments)
        result: dict[str, Any] = answer["result"]
        return result

    async def wait_for_tools(self, wanted: set[str]) -> None:
        ids = iter(range(10_000, 20_000))

        async def listed() -> bool:
            tools = (await self.request(next(ids), "tools/list"))["result"]["tools"]
            return wanted <= {t["name"] for t in tools}

        await wait_for(listed, timeout=30, interval=0.2)

    async def close(self, timeout: float = 10) -> int | None:
        """Close its stdin, as a client that quits does: its exit status, None while it runs on."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        with anyio.move_on_after(timeout):
            await self.process.wait()
        return self.process.returncode

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading


def text(result: dict[str, Any]) -> str:
    return "".join(c["text"] for c in result["content"] if c.get("type") == "text")


def configure(home: Path, a: list[str], **supervisor: Any) -> Path:
    """The user's config: fixture servers `a` (with these flags) and `b`."""
    servers = {"a": fixture("--name", "a", *a), "b": fixture("--name", "b")}
    config = home / "config.json"
    config.write_text(json.dumps({"mcpServers": servers, "supervisor": {**FAST, **supervisor}}), encoding="utf-8")
    return config


@pytest.mark.parametrize("link", LINKS)
async def test_an_answer_longer_than_the_relay_reads_at_once_reaches_the_client_whole(user: Path, link: str) -> None:
    configure(user, ["--big"])
    mib = (READ_AHEAD >> 20) + 0.5
    bridge = await Bridge.start(user, link)
    try:
        await bridge.handshake()
        await bridge.wait_for_tools({"big", "b__echo"})
        result = await bridge.call(1, "big", 60, mib=mib)
        assert not result.get("isError"), text(result)[:300]  # not "the engine went away": it did not
        assert len(text(result)) == int(mib * (1 << 20))
        assert text(await bridge.call(2, "b__echo", text="next")) == "next"
        assert len(engines(user)) == 1
    finally:
        await bridge.stop()


@pytest.mark.parametrize("link", LINKS)
async def test_connect_leaves_with_its_client_while_no_engine_can_be_reached(user: Path, link: str) -> None:
    """An engine that is advertised but does not answer (killed, its advertisement and socket left
    behind; a process that happens to have its pid): `connect` tries it again and again, and must
    still notice its client closing stdin, or it outlives the client."""
    run = user / "run"
    (run / "engines").mkdir(parents=True)
    (run / "token").write_text("a-token", encoding="ascii")
    sleeper = await anyio.open_process(["sleep", "600"])
    try:
        endpoint = "http://127.0.0.1:9/mcp"  # the discard port: nothing listens there
        advertisement = {
            "pid": sleeper.pid,
            "endpoint": endpoint,
            "urls": {m: f"{endpoint}/{m}" for m in ("discovery", "direct")},
            "socket": str(run / f"engine-{sleeper.pid}.sock"),  # no such file
            "token_file": str(run / "token"),
            "front_end": "background",
        }
        (run / "engines" / f"{sleeper.pid}.json").write_text(json.dumps(advertisement), encoding="utf-8")
        bridge = await Bridge.start(user, link, "--no-start")
        try:
            await bridge.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
            await anyio.sleep(1)  # it is trying to reach the engine now
            assert await bridge.close() is not None, "connect outlived its client"
        finally:
            await bridge.stop()
    finally:
        sleeper.kill()
        await sleeper.wait()
        await sleeper.aclose()
        (run / "engines" / f"{sleeper.pid}.json").unlink(missing_ok=True)


@asynccontextmanager
async def stopping_engine(
    user: Path, link: str, a: list[str], tools: set[str]
) -> AsyncIterator[tuple[subprocess.Popen[bytes], Bridge]]:
    """A `serve --http` engine (server `a` with these flags, `b`; 2 s stop grace) and a `connect`
    over `link` whose client has shaken hands and sees `tools`; both ended after."""
    config = configure(user, a, stopGrace=2)
    engine = spawn_serve_http(config, user, user / "serve-http-stderr.log")
    try:
        await wait_for(lambda: engines(user), timeout=30)  # (before `connect`, or it starts one of its own)
        bridge = await Bridge.start(user, link)
        try:
            await bridge.handshake()
            await bridge.wait_for_tools(tools)
            yield engine, bridge
        finally:
            await bridge.stop()
    finally:
        if engine.poll() is None:
            engine.kill()
        engine.wait()


@pytest.mark.parametrize("link", LINKS)
async def test_a_request_sent_while_the_engine_stops_is_answered_by_the_next_one(user: Path, link: str) -> None:
    """The engine stops its servers before it withdraws its advertisement (`a` here takes its full
    stop grace): a relay that looks for an engine meanwhile finds the stopping one, and must wait
    for the next rather than give up on the client."""
    async with stopping_engine(user, link, ["--stubborn"], {"a__echo", "b__echo"}) as (engine, bridge):
        [advertised] = engines(user)
        engine.send_signal(signal.SIGTERM)
        await wait_for(lambda: endpoint_closed(advertised), timeout=30)  # stopping its servers:
        assert engine.poll() is None and engines(user)  # still advertised
        assert text(await bridge.call(1, "b__echo", 60, text="after")) == "after"
        assert engine_pid(user) != engine.pid


@pytest.mark.parametrize("link", LINKS)
async def test_a_call_in_flight_when_the_engine_stops_gets_its_answer_within_the_grace(user: Path, link: str) -> None:
    """Quitting the engine gives the calls in flight a second (`stopping.GRACE`) before the sessions
    end and the servers stop: a call with half a second to go is answered as if nothing happened,
    over either link, even when the client sends another request meanwhile (over HTTP the stopping
    engine does not take it, and `connect` holds it for the next engine rather than giving up on
    this one). A call that needs longer is cut off then, with the words that say it may have run,
    and the engine still stops at once after (no waiting on the call)."""
    async with stopping_engine(user, link, [], {"a__sleep", "b__sleep"}) as (engine, bridge):
        log = user / "logs" / "a.log"
        short = asyncio.ensure_future(bridge.call(1, "a__sleep", 30, seconds=0.5))
        long = asyncio.ensure_future(bridge.call(2, "b__sleep", 30, seconds=30))
        await wait_for(lambda: "sleeping 0.5s" in log.read_text(), timeout=10)
        await wait_for(lambda: "sleeping 30s" in (user / "logs" / "b.log").read_text(), timeout=10)
        [advertised] = engines(user)
        engine.send_signal(signal.SIGTERM)
        await wait_for(lambda: refuses_new_requests(advertised), timeout=30)  # its second has begun
        meanwhile = asyncio.ensure_future(bridge.call(3, "b__echo", 60, text="meanwhile"))
        assert text(await short) == "slept"
        assert text(await meanwhile) == "meanwhile"
        cut = await long
        assert cut["isError"] is True and "may or may not have run" in text(cut)
        with anyio.fail_after(15):
            while engine.poll() is None:
                await anyio.sleep(0.05)
        assert "cancelled sleep" not in log.read_text()


async def test_a_request_sent_as_the_engine_begins_to_stop_is_answered_by_the_next_one(user: Path) -> None:
    """Sent once the engine has begun to stop (seen refusing a request of the test's own; a call in
    flight holds that moment open for its second, `stopping.GRACE`), the call reaches the stopping
    engine over the connection `connect --http` keeps: it is answered 503, not taken
    (`routes.Paths`), and sent on to the next engine rather than the client being told it may have
    run (an HTTP 500 before). (The 503 itself: tests/core/serve/test_routes.py.) Sent at once after
    SIGTERM instead, it may reach the engine before the signal is acted on, and be answered by it."""
    async with stopping_engine(user, "http", ["--stubborn"], {"a__echo", "b__echo", "b__sleep"}) as (engine, bridge):
        [advertised] = engines(user)
        held = asyncio.ensure_future(bridge.call(2, "b__sleep", 30, seconds=30))
        await wait_for(lambda: "sleeping 30s" in (user / "logs" / "b.log").read_text(), timeout=10)
        engine.send_signal(signal.SIGTERM)
        await wait_for(lambda: refuses_new_requests(advertised), timeout=30)
        assert text(await bridge.call(1, "b__echo", 60, text="after")) == "after"
        assert engine_pid(user) != engine.pid
        assert "may or may not have run" in text(await held)  # (cut off as the second ended)


@pytest.mark.parametrize("link", LINKS)
async def test_an_engine_connect_started_then_killed_is_replaced_on_the_next_call(user: Path, link: str) -> None:
    """SIGKILL: the engine removes neither its advertisement nor its socket. It was started by this
    `connect` (no engine ran): were it left a zombie, its advertisement would read as a live engine's."""
    bridge = await Bridge.start(user, link)
    try:
        await bridge.handshake()
        await bridge.wait_for_tools({"a__sleep", "b__echo"})
        first = engine_pid(user)
        in_flight = asyncio.ensure_future(bridge.call(1, "a__sleep", 60, seconds=60))
        await wait_for(lambda: "sleeping 60s" in (user / "logs" / "a.log").read_text(), timeout=10)
        os.kill(first, signal.SIGKILL)
        interrupted = await in_flight
        assert interrupted["isError"] is True
        assert "may or may not have run" in text(interrupted)
        assert not pid_alive(first)
        assert text(await bridge.call(2, "b__echo", 45, text="after")) == "after"
        assert engine_pid(user) != first
        second = engine_pid(user)
        os.kill(second, signal.SIGKILL)  # idle this time
        # Reaped: all its threads gone, and with them its sockets (a zombie leader may still have them).
        await wait_for(lambda: not Path(f"/proc/{second}").exists(), timeout=10)
        assert text(await bridge.call(3, "b__echo", 45, text="again")) == "again"
        assert await bridge.close() == 0
    finally:
        await bridge.stop()


@pytest.mark.parametrize("link", LINKS)
async def test_a_request_longer_than_the_engine_takes_is_refused_by_its_id(user: Path, link: str) -> None:
    """Not "may or may not have run" (it did not run), and `connect` goes on: over the socket the
    engine's line cap (64 MiB) names the id; over HTTP its body cap does, as HTTP 413."""
    bridge = await Bridge.start(user, link)
    try:
        await bridge.handshake()
        await bridge.wait_for_tools({"b__echo"})
        answer = await bridge.request(1, "tools/call", 60, name="b__echo", arguments={"text": "x" * (65 << 20)})
        error = answer["error"]
        expected = "Message too large: over 64 MiB" if link == "socket" else "refused the request (HTTP 413"
        assert expected in error["message"], error
        assert text(await bridge.call(2, "b__echo", text="next")) == "next"
    finally:
        await bridge.stop()
