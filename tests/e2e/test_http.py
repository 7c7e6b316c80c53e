"""`mcpmanager serve --http` as a real subprocess, driven by the SDK client over Streamable HTTP in
both protocol eras; mcpmanager as a remote (HTTP) downstream of another mcpmanager."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from tests.helpers.clients import http_client, text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http

ERAS = ["legacy", "auto"]


async def names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def has(client: Client, wanted: set[str]) -> bool:
    return wanted <= await names(client)


def advertised(home: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "status", "--json"],
        env={"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=30,
    )
    engines: list[dict[str, Any]] = json.loads(out.stdout)["engines"]
    return engines[0] if engines else {}


async def call(downstream: Downstream, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await downstream.call_tool(tool, arguments)
    assert isinstance(result, types.CallToolResult)
    return result


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize("era", ERAS)
async def test_http_lists_and_routes_in_both_eras(tmp_path: Path, home: Path, era: str) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a"), "b": fixture("--name", "b")}, supervisor=FAST)
    async with serving_http(config, home) as served:
        assert served.count == 2
        async with http_client(served.url, served.token, era) as client:
            expected = "2025-11-25" if era == "legacy" else "2026-07-28"
            assert client.protocol_version == expected
            await wait_for(lambda: has(client, {"a__echo", "b__echo"}), timeout=30)
            listed = await names(client)
            assert {f"{s}__{t}" for s in "ab" for t in ("echo", "add", "whoami")} <= listed
            result = await client.call_tool("b__echo", {"text": "over http"})
            assert not result.is_error
            assert text_of(result) == "over http"
            assert result.structured_content == {"text": "over http"}
            assert text_of(await client.call_tool("a__add", {"a": 20, "b": 22})) == "42"
            assert text_of(await client.call_tool("a__whoami", {})).startswith("a ")
            unknown = await client.call_tool("nope", {})
            assert unknown.is_error and "Unknown tool 'nope'" in text_of(unknown)
        assert advertised(home)["endpoint"] == served.url


async def test_the_endpoint_answers_local_holders_of_the_token_only(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a")}, supervisor=FAST)
    async with serving_http(config, home) as served:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
        port = served.url.split(":")[2].split("/")[0]
        base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        good = {**base, "Authorization": f"Bearer {served.token}"}
        token_file = home / "run" / "token"
        assert token_file.stat().st_mode & 0o777 == 0o600  # only the user can read it
        assert served.token not in served.errlog.read_text()  # never logged
        async with httpx2.AsyncClient(timeout=10) as http:
            for path in ("/mcp", "/mcp/discovery", "/mcp/direct"):
                url = f"http://127.0.0.1:{port}{path}"
                for headers in (base, {**base, "Authorization": "Bearer wrong"}, {**base, "Authorization": "Basic x"}):
                    refused = await http.post(url, json=initialize, headers=headers)
                    assert refused.status_code == 401, (path, headers)
                    assert refused.headers["www-authenticate"] == 'Bearer realm="mcpmanager"'
                for origin in ("https://evil.example", "http://127.0.0.1.evil.example:80", "null"):
                    foreign = await http.post(url, json=initialize, headers={**good, "Origin": origin})
                    assert foreign.status_code == 403, (path, origin)
                for host in ("evil.example", "attacker.invalid:8080", f"evil.example:{port}"):
                    misdirected = await http.post(url, json=initialize, headers={**good, "Host": host})
                    assert misdirected.status_code == 421, (path, host)
                # A foreign Host or Origin is refused before the token is even looked at.
                assert (
                    await http.post(url, json=initialize, headers={**base, "Host": "evil.example"})
                ).status_code == 421
                # The same request from a local holder of the token is served, from a local page too.
                for extra in ({}, {"Origin": f"http://localhost:{port}"}, {"Host": f"localhost:{port}"}):
                    own = await http.post(url, json=initialize, headers={**good, **extra})
                    assert own.status_code == 200, (path, extra)
                    assert own.headers.get("mcp-session-id")


@pytest.mark.parametrize("era", ERAS)
async def test_each_path_serves_its_mode(tmp_path: Path, home: Path, era: str) -> None:
    config = write_config(tmp_path, {"a": fixture("--name", "a")}, supervisor=FAST)
    async with serving_http(config, home) as served:  # `--mode direct`: /mcp is direct
        base = served.url
        async with http_client(f"{base}/discovery", served.token, era) as discovery:
            await wait_for(lambda: has(discovery, {"discover_tools", "call_tool"}), timeout=30)
            assert "echo" not in await names(discovery)
            called = await discovery.call_tool("call_tool", {"tool_name": "echo", "arguments": {"text": "via d"}})
            assert text_of(called) == "via d"
        for url in (f"{base}/direct", base):
            async with http_client(url, served.token, era) as direct:
                await wait_for(lambda c=direct: has(c, {"echo", "whoami"}), timeout=30)
                assert "discover_tools" not in await names(direct)
        info = advertised(home)
        assert info["urls"] == {"discovery": f"{base}/discovery", "direct": f"{base}/direct"}
        assert info["token_file"] == str(home / "run" / "token")


@pytest.mark.parametrize("era", ERAS)
async def test_sigterm_with_a_client_connected_exits_0_and_stops_every_server(
    tmp_path: Path, home: Path, era: str
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    config = write_config(
        tmp_path, {"a": fixture("--name", "a"), "g": fixture("--grandchild", str(pidfile))}, supervisor=FAST
    )
    pids: list[int] = []
    try:
        async with serving_http(config, home) as served, http_client(served.url, served.token, era) as client:
            await wait_for(lambda: has(client, {"a__whoami", "g__whoami"}), timeout=30)
            pids += [int(text_of(await client.call_tool(f"{s}__whoami", {})).split()[-1]) for s in "ag"]
            await wait_for(pidfile.exists, timeout=10)
            pids.append(int(pidfile.read_text(encoding="utf-8")))
            assert all(pid_alive(pid) for pid in pids)
            assert advertised(home)["pid"] == served.process.pid
            # A connected client holds an open stream (the standalone GET stream in the handshake era,
            # a subscriptions/listen stream in the modern one); it must not hold the server up.
            async with AsyncExitStack() as stack:
                if era == "auto":
                    await stack.enter_async_context(client.listen(tools_list_changed=True))
                served.process.send_signal(signal.SIGTERM)
                await wait_for(lambda: served.process.poll() is not None, timeout=30)
        assert served.process.returncode == 0, served.errlog.read_text()
        await wait_for(lambda: not any(pid_alive(pid) for pid in pids), timeout=10)
        assert advertised(home) == {}
        assert not list((home / "run" / "engines").glob("*.json"))
    except BaseException:
        # The test failed: a hung engine killed by the helper could not stop its servers itself.
        for pid in pids:
            if pid_alive(pid):
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        raise


@pytest.mark.parametrize("era", ERAS)
async def test_mcpmanager_as_a_remote_downstream(tmp_path: Path, home: Path, era: str) -> None:
    inner_config = write_config(tmp_path / "inner", {"f": fixture("--name", "f", "--changing-tools")}, supervisor=FAST)
    async with serving_http(inner_config, home / "inner") as inner:
        remote = {"type": "http", "url": inner.url, "headers": {"Authorization": f"Bearer {inner.token}"}}
        outer_config = write_config(tmp_path / "outer", {"remote": remote}, supervisor=FAST)
        async with serving_http(outer_config, home / "outer") as outer:
            async with http_client(outer.url, outer.token, era) as client:
                await wait_for(lambda: has(client, {"echo", "whoami"}), timeout=30)
                builtins = {"echo", "add", "fail", "slow", "sleep", "whoami", "stderr"}
                assert await names(client) == builtins | {"add_tool", "remove_tool"}
                result = await client.call_tool("echo", {"text": "two hops"})
                assert not result.is_error
                assert text_of(result) == "two hops"
                assert result.structured_content == {"text": "two hops"}
                assert text_of(await client.call_tool("whoami", {})).startswith("f ")
                failing = await client.call_tool("fail", {"message": "deep failure"})
                assert failing.is_error and "deep failure" in text_of(failing)
                # A change two hops down travels up: fixture → inner (list_changed) → outer's remote
                # connection (the inner one's notification) → the outer catalogue → this client.
                assert text_of(await client.call_tool("add_tool", {"name": "brand_new"})) == "added brand_new"
                await wait_for(lambda: has(client, {"brand_new"}), timeout=15)
                assert text_of(await client.call_tool("brand_new", {"x": 1})) == '{"x": 1}'
            # `mcpmanager status` follows tool changes too, not only state changes.
            await wait_for(lambda: advertised(home / "outer")["servers"]["remote"]["tools"] == 10, timeout=10)
            remote = advertised(home / "outer")["servers"]["remote"]
            assert remote["state"] == "ready" and remote["pid"] is None
            assert advertised(home / "outer")["tools"] == 10


async def test_a_refused_remote_backs_off_and_disturbs_nothing(home: Path) -> None:
    url = f"http://127.0.0.1:{unused_port()}/mcp"
    document = {
        "mcpServers": {"dead": {"type": "http", "url": url}, "ok": fixture()},
        "supervisor": {**FAST, "backoffInitial": 0.05},
    }
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home)})
    engine = Engine(parse_config(json.dumps(document), "test"), paths, "direct")
    reasons: list[str] = []
    engine.events.connect(lambda event: reasons.append(getattr(getattr(event, "status", None), "reason", "")))
    await engine.start()
    try:
        dead, ok = engine.downstreams["dead"], engine.downstreams["ok"]
        await wait_for(lambda: dead.status.state is State.FAILED, timeout=30)
        assert "ConnectError" in dead.status.reason
        assert any(r.startswith("ConnectError") for r in reasons)  # it was in backoff on the way
        assert dead.status.reason.startswith("crash loop: 3 crashes")
        assert f"[mcpmanager] connecting to {url}" in dead.log.tail(10)
        await wait_for(lambda: ok.status.state is State.READY, timeout=30)
        assert text_of(await call(ok, "echo", {"text": "unbothered"})) == "unbothered"
        assert {t.server for t in engine.catalogue.tools()} == {"ok"}
        refused = await call(dead, "echo", {"text": "x"})
        assert refused.is_error and "Server 'dead' is unavailable" in text_of(refused)
        assert "ConnectError" in text_of(refused)
    finally:
        await engine.stop()
