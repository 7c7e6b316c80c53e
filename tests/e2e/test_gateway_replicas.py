"""Two `serve --http --stateless` engine processes behind haproxy (round robin, no affinity): one SDK
client's session is served by both; one replica is killed mid-session and the client carries on;
the killed replica's servers do not outlive it; restarted, it takes its share again. And the
control: without `--stateless`, a handshake-era session breaks as soon as it lands on the other
replica, which is why the gateway has the option."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers.clients import text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.gateway import Replica, add_token, gateway_client, listening, spawn_replica, stop
from tests.helpers.haproxy import load_balancer, unused_port

ERAS = ["legacy", "auto"]


def parent_of(pid: int) -> int:
    """The parent's pid, from /proc (Linux, as CI is)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def whoami(client: Client) -> int:
    """The pid of the fixture server that answered (each replica runs its own)."""
    result = await client.call_tool("a__whoami", {})
    assert not result.is_error, text_of(result)
    return int(text_of(result).split()[-1])


async def replicas_answering(client: Client, calls: int) -> dict[int, int]:
    """Which replica (engine pid) answered each of `calls` calls: {engine pid: count}."""
    served: dict[int, int] = {}
    for _ in range(calls):
        engine = parent_of(await whoami(client))
        served[engine] = served.get(engine, 0) + 1
    return served


async def _ready(client: Client) -> None:
    async def both_listed() -> bool:
        names = {t.name for t in (await client.list_tools()).tools}
        return "a__whoami" in names

    await wait_for(both_listed, timeout=30)


@pytest.mark.parametrize("era", ERAS)
async def test_a_session_is_served_by_both_replicas_and_survives_one_being_killed(tmp_path: Path, era: str) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a"), "b": fixture("--name", "b")}, supervisor=FAST)
    tokens = tmp_path / "tokens.json"
    token = add_token(tokens, "ci")
    ports = [unused_port(), unused_port()]

    def replica(i: int) -> Replica:
        flags = ["--port", str(ports[i]), "--stateless", "--tokens", str(tokens)]
        return spawn_replica(config, tmp_path / f"replica-{i}", flags)

    first, second = replica(0), replica(1)
    try:
        await listening(first)
        await listening(second)
        with load_balancer(tmp_path, ports) as port:
            async with gateway_client(f"http://127.0.0.1:{port}/mcp", token, era) as client:
                await _ready(client)
                # Round robin without affinity: one session, its calls answered by both engines.
                served = await replicas_answering(client, 12)
                assert set(served) == {first.process.pid, second.process.pid}, served

                fixture_pids = {await whoami(client) for _ in range(6)}
                killed_servers = {pid for pid in fixture_pids if parent_of(pid) == first.process.pid}
                assert killed_servers
                os.kill(first.process.pid, signal.SIGKILL)  # mid-session, no warning
                first.process.wait(timeout=10)

                # The same client, the same session: every call still answered, now by the other.
                after = await replicas_answering(client, 10)
                assert after == {second.process.pid: 10}
                echoed = await client.call_tool("b__echo", {"text": "still here"})
                assert text_of(echoed) == "still here"
                # Nothing of the killed engine runs on: its servers end with it (their stdin closes).
                await wait_for(lambda: not any(pid_alive(pid) for pid in killed_servers), timeout=20)

                # Restarted on its port (a rolling update): it takes calls of this session again.
                first = await listening(replica(0))

                async def back() -> bool:
                    return first.process.pid in await replicas_answering(client, 2)

                await wait_for(back, timeout=30, interval=0.2)
    finally:
        await stop(first)
        await stop(second)


async def test_without_stateless_a_handshake_session_breaks_on_the_other_replica(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a"), "b": fixture("--name", "b")}, supervisor=FAST)
    tokens = tmp_path / "tokens.json"
    token = add_token(tokens, "ci")
    ports = [unused_port(), unused_port()]
    replicas = [
        spawn_replica(config, tmp_path / f"replica-{i}", ["--port", str(p), "--tokens", str(tokens)])
        for i, p in enumerate(ports)
    ]
    try:
        for one in replicas:
            await listening(one)
        with load_balancer(tmp_path, ports) as port, pytest.raises(Exception) as failed:
            async with gateway_client(f"http://127.0.0.1:{port}/mcp", token, "legacy") as client:
                for _ in range(6):
                    await client.list_tools()
        errors = [e for e in leaves(failed.value) if isinstance(e, MCPError)]
        assert [str(e) for e in errors] == ["Session not found"], failed.value
    finally:
        for one in replicas:
            await stop(one)
