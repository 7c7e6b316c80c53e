"""What each path adds to a tool call: the same echo tool, the same SDK client, interleaved rounds.

Paths (the downstream is `tests/bench/echo_server.py` everywhere):

- `direct-stdio`, `direct-http`, `direct-sse`: the client talks to the echo server itself (the
  baselines; `direct-sse` over the older SSE transport, which is what mcp-hub serves).
- `floor-http`: `tests/bench/floor_relay.py`, the least a relay from HTTP to the stdio echo server
  can do (bodies passed as they came, nothing checked): the floor under `serve-http`.
- `serve-stdio`: `mcpmanager serve --stdio --mode direct`, the echo server below it.
- `discovery-stdio`: `mcpmanager serve --stdio --mode discovery`, the echo tool called through the
  `call_tool` meta-tool (against `serve-stdio`, the same call in direct mode).
- `serve-http`: `mcpmanager serve --http --mode direct`.
- `connect`: `mcpmanager connect --mode direct`, relaying to the `serve-http` engine over its local
  socket; `connect-http`: the same with `--http`, over its Streamable HTTP endpoint.
- `fastmcp-proxy`: FastMCP's `create_proxy` over stdio (a peer; needs `--peers DIR`).
- `mcp-hub`: mcp-hub's unified `/mcp` endpoint (a peer, Node; needs `--peers DIR`).

Every client stays connected for the whole run; each round calls every path `--calls` times in
turn, so a noisy neighbour hits every path alike. Figures: p50 and p90 per call, the p50 added over
the direct call of the same transport (stdio for the stdio paths, HTTP for the HTTP ones) and the
ratio to it; throughput with `--in-flight` calls outstanding, as a share of direct stdio's; the
engine's resident memory after the run; the load average before and after.

Peers are installed outside the repo (they are not dependencies):

    python3 -m venv DIR/fastmcp-venv && DIR/fastmcp-venv/bin/pip install fastmcp
    npm install --prefix DIR/npm mcp-hub

    .venv/bin/python -m tests.bench.bench_path [--rounds 5] [--calls 200] [--peers DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.engines import home_token, wait_for
from tests.helpers.haproxy import unused_port

ECHO_SERVER = Path(__file__).with_name("echo_server.py")
FLOOR_RELAY = Path(__file__).with_name("floor_relay.py")
BASELINE = {"serve-stdio": "direct-stdio", "connect": "direct-stdio", "connect-http": "direct-stdio"}
BASELINE |= {"fastmcp-proxy": "direct-stdio", "serve-http": "direct-http", "mcp-hub": "direct-sse"}
BASELINE |= {"floor-http": "direct-http", "discovery-stdio": "serve-stdio"}
PING = {"text": "ping"}
# mcpmanager's path → the peer it is compared with (`connect`: what a desktop client reaches us by)
PEERS = {"serve-stdio": "fastmcp-proxy", "serve-http": "mcp-hub", "connect": "mcp-hub"}
FASTMCP_PROXY = """
import sys
from fastmcp.server import create_proxy
config = {"mcpServers": {"echo": {"command": sys.argv[1], "args": [sys.argv[2]]}}}
create_proxy(config).run(transport="stdio", show_banner=False)
"""


@dataclass
class Route:
    name: str
    client: Client
    tool: str
    pid: int | None = None  # the process whose memory is reported (mcpmanager's engine)
    arguments: dict[str, Any] = field(default_factory=lambda: PING)
    times: list[float] = field(default_factory=list)
    rounds: list[float] = field(default_factory=list)  # each round's p50


async def call(path: Route) -> float:
    started = time.perf_counter()
    result = await path.client.call_tool(path.tool, path.arguments)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result
    return elapsed


def spawn(command: list[str], log: Path, env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)


@asynccontextmanager
async def process(
    command: list[str], log: Path, ready: re.Pattern[str], env: dict[str, str] | None = None
) -> AsyncIterator[re.Match[str]]:
    """A subprocess that says on stderr when it listens; yields that line's match."""
    proc = spawn(command, log, env)
    try:
        await wait_for(lambda: ready.search(log.read_text(errors="replace")) or proc.poll() is not None, timeout=60)
        found = ready.search(log.read_text(errors="replace"))
        assert found, f"{command[0]} exited {proc.returncode}:\n{log.read_text(errors='replace')}"
        yield found
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def open_paths(stack: AsyncExitStack, scratch: Path, peers: Path | None, era: str) -> list[Route]:
    python = sys.executable
    base_env = {"PATH": os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
    config = scratch / "config.json"
    config.write_text(json.dumps({"mcpServers": {"echo": {"command": python, "args": [str(ECHO_SERVER)]}}}))
    home = scratch / "home"
    home.mkdir()
    engine_env = {**base_env, "MCPMANAGER_HOME": str(home)}
    errlog = (scratch / "clients.log").open("a")
    stack.callback(errlog.close)

    async def stdio(command: str, args: list[str], env: dict[str, str]) -> Client:
        params = StdioServerParameters(command=command, args=args, env=env)
        return await stack.enter_async_context(Client(stdio_client(params, errlog=errlog), mode=era, cache=None))

    async def http(url: str, headers: dict[str, str] | None = None) -> Client:
        client = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30, read=300))
        await stack.enter_async_context(client)
        transport = streamable_http_client(url, http_client=client)
        return await stack.enter_async_context(Client(transport, mode=era, cache=None))

    paths = [Route("direct-stdio", await stdio(python, [str(ECHO_SERVER)], base_env), "echo")]
    port = unused_port()
    echo_http = re.compile(r"ready (http://\S+/mcp)")
    found = await stack.enter_async_context(
        process([python, str(ECHO_SERVER), "--http", str(port)], scratch / "echo-http.log", echo_http)
    )
    paths.append(Route("direct-http", await http(found.group(1)), "echo"))
    port = unused_port()
    found = await stack.enter_async_context(
        process([python, str(FLOOR_RELAY), str(port), str(ECHO_SERVER)], scratch / "floor.log", echo_http)
    )
    paths.append(Route("floor-http", await http(found.group(1)), "echo"))
    if peers is not None:  # (the baseline of a peer that serves only the SSE transport)
        port = unused_port()
        echo_sse = re.compile(r"ready (http://\S+/sse)")
        found = await stack.enter_async_context(
            process([python, str(ECHO_SERVER), "--sse", str(port)], scratch / "echo-sse.log", echo_sse)
        )
        sse_client_ = await stack.enter_async_context(Client(sse_client(found.group(1)), mode=era, cache=None))
        paths.append(Route("direct-sse", sse_client_, "echo"))

    serve = ["-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
    stdio_home = scratch / "home-stdio"
    paths.append(
        Route("serve-stdio", await stdio(python, serve, {**base_env, "MCPMANAGER_HOME": str(stdio_home)}), "echo")
    )
    discovery = [*serve[:-3], "discovery", *serve[-2:]]
    wrapped = {"tool_name": "echo", "arguments": PING}
    client = await stdio(python, discovery, {**base_env, "MCPMANAGER_HOME": str(scratch / "home-discovery")})
    paths.append(Route("discovery-stdio", client, "call_tool", arguments=wrapped))

    serving = re.compile(r"serving \d+ servers on (http://\S+/mcp)")
    command = [
        python,
        "-m",
        "mcpmanager",
        "serve",
        "--http",
        "--port",
        "0",
        "--mode",
        "direct",
        "--config",
        str(config),
    ]
    found = await stack.enter_async_context(process(command, scratch / "serve-http.log", serving, engine_env))
    engine = int(json.loads(next((home / "run" / "engines").glob("*.json")).read_text())["pid"])
    token = home_token(home)
    paths.append(Route("serve-http", await http(found.group(1), {"Authorization": f"Bearer {token}"}), "echo", engine))
    connect = ["-m", "mcpmanager", "connect", "--mode", "direct", "--no-start"]
    paths.append(Route("connect", await stdio(python, connect, engine_env), "echo"))
    paths.append(Route("connect-http", await stdio(python, [*connect, "--http"], engine_env), "echo"))

    if peers is not None:
        fastmcp = peers / "fastmcp-venv" / "bin" / "python"
        if fastmcp.exists():
            script = scratch / "fastmcp_proxy.py"
            script.write_text(FASTMCP_PROXY)
            client = await stdio(str(fastmcp), [str(script), python, str(ECHO_SERVER)], base_env)
            paths.append(Route("fastmcp-proxy", client, await tool_named_echo(client)))
        hub = peers / "npm" / "node_modules" / ".bin" / "mcp-hub"
        if hub.exists():
            hub_config = scratch / "mcp-hub.json"
            hub_config.write_text(json.dumps({"mcpServers": {"echo": {"command": python, "args": [str(ECHO_SERVER)]}}}))
            hub_port = unused_port()
            hub_ready = re.compile(r"MCP_HUB_STARTED|Server is running|listening on|started successfully", re.I)
            command = [str(hub), "--port", str(hub_port), "--config", str(hub_config)]
            hub_env = {**base_env, "HOME": str(scratch)}
            await stack.enter_async_context(process(command, scratch / "hub.log", hub_ready, hub_env))
            # mcp-hub 4's one MCP endpoint is the SSE transport: GET /mcp, then POSTs to /messages.
            url = f"http://127.0.0.1:{hub_port}/mcp"

            async def sse() -> Client:
                return await stack.enter_async_context(Client(sse_client(url), mode=era, cache=None))

            client = await wait_connectable(sse)
            paths.append(Route("mcp-hub", client, await tool_named_echo(client)))
    return paths


async def wait_connectable(open_client: Callable[[], Awaitable[Client]]) -> Client:
    deadline = time.monotonic() + 60
    while True:
        try:
            client = await open_client()
            if await tool_named_echo(client, wait=False):
                return client
        except Exception:
            if time.monotonic() > deadline:
                raise
        await anyio.sleep(0.5)


async def tool_named_echo(client: Client, wait: bool = True) -> str:
    """The name a proxy gives the echo tool (prefixed or not), once it lists it."""
    deadline = time.monotonic() + (60 if wait else 0)
    while True:
        names = [t.name for t in (await client.list_tools()).tools if "echo" in t.name]
        if names or time.monotonic() > deadline:
            return min(names, key=len) if names else ""
        await anyio.sleep(0.2)


async def throughput(path: Route, calls: int, in_flight: int) -> float:
    """Calls per second with `in_flight` calls outstanding."""
    limiter = anyio.Semaphore(in_flight)

    async def one() -> None:
        async with limiter:
            await call(path)

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(calls):
            tasks.start_soon(one)
    return calls / (time.perf_counter() - started)


def rss_mib(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else None


async def measure(rounds: int, calls: int, in_flight: int, peers: Path | None, era: str) -> dict[str, Any]:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-path-") as folder:
        async with AsyncExitStack() as stack:
            paths = await open_paths(stack, Path(folder), peers, era)
            for path in paths:  # warm every path: imports, caches, connections
                for _ in range(50):
                    await call(path)
            for _ in range(rounds):
                for path in paths:
                    times = [await call(path) for _ in range(calls)]
                    path.times += times
                    path.rounds.append(statistics.median(times))
            rates: dict[str, list[float]] = {p.name: [] for p in paths}
            for _ in range(rounds):
                for path in paths:
                    rates[path.name].append(await throughput(path, calls * 2, in_flight))
            memory = {p.name: rss_mib(p.pid) for p in paths if p.pid is not None}
    return figures(paths, rates, memory, load_before, os.getloadavg(), era, in_flight)


def figures(
    paths: list[Route],
    rates: dict[str, list[float]],
    memory: dict[str, float | None],
    before: tuple[float, float, float],
    after: tuple[float, float, float],
    era: str,
    in_flight: int,
) -> dict[str, Any]:
    p50 = {p.name: statistics.median(p.times) * 1000 for p in paths}
    rows: dict[str, dict[str, Any]] = {}
    for path in paths:
        base = BASELINE.get(path.name)
        rate = statistics.median(rates[path.name])
        rows[path.name] = {
            "p50_ms": round(p50[path.name], 3),
            "p90_ms": round(statistics.quantiles(path.times, n=10)[-1] * 1000, 3),
            "baseline": base,
            "added_p50_ms": round(p50[path.name] - p50[base], 3) if base else None,
            "ratio": round(p50[path.name] / p50[base], 2) if base else None,
            "calls_per_s": round(rate, 1),
            "throughput_vs_direct_stdio": round(rate / statistics.median(rates["direct-stdio"]), 2),
            "calls": len(path.times),
        }
    # Against each peer, mcpmanager's path of the same kind, round by round (the run's p50 moves with
    # the machine; a round is every path measured a moment apart): by the ratio to each one's own
    # direct call, and end to end (what the client waits, whatever the transport).
    by_name = {p.name: p for p in paths}

    def ratios(path: Route) -> list[float]:
        base = by_name[BASELINE[path.name]]
        return [a / b for a, b in zip(path.rounds, base.rounds, strict=True)]

    head_to_head: dict[str, list[int]] = {}
    for ours, peer in PEERS.items():
        if ours in by_name and peer in by_name:
            mine, theirs = by_name[ours], by_name[peer]
            rounds = len(mine.rounds)
            by_ratio = sum(a <= b for a, b in zip(ratios(mine), ratios(theirs), strict=True))
            end_to_end = sum(a <= b for a, b in zip(mine.rounds, theirs.rounds, strict=True))
            head_to_head[f"{ours} vs {peer}, by ratio"] = [by_ratio, rounds]
            head_to_head[f"{ours} vs {peer}, end to end"] = [end_to_end, rounds]
    # A path over another transport than its baseline's, against direct Streamable HTTP too.
    across = {
        name: round(p50[name] / p50["direct-http"], 2)
        for name in ("direct-sse", "mcp-hub")
        if name in p50 and "direct-http" in p50
    }
    return {
        "era": era,
        "in_flight": in_flight,
        "paths": rows,
        "rounds_at_or_below": head_to_head,
        "ratio_to_direct_http": across,
        "engine_rss_mib": {k: round(v, 1) for k, v in memory.items() if v is not None},
        "load_before": [round(x, 2) for x in before],
        "load_after": [round(x, 2) for x in after],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per path per round")
    parser.add_argument("--in-flight", type=int, default=50, help="outstanding calls in the throughput runs")
    parser.add_argument("--peers", type=Path, help="where the peers are installed (see above)")
    parser.add_argument("--era", default="legacy", choices=["legacy", "auto"], help="the client's protocol era")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = anyio.run(measure, args.rounds, args.calls, args.in_flight, args.peers, args.era)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"era {result['era']}; load {result['load_before']} → {result['load_after']}")
    print(f"{'path':<15}{'p50 ms':>9}{'p90 ms':>9}{'added':>9}{'ratio':>7}{'calls/s':>10}{'vs direct':>11}")
    for name, row in result["paths"].items():
        added = f"{row['added_p50_ms']:+.2f}" if row["added_p50_ms"] is not None else ""
        ratio = f"×{row['ratio']:.2f}" if row["ratio"] is not None else ""
        print(
            f"{name:<15}{row['p50_ms']:>9.2f}{row['p90_ms']:>9.2f}{added:>9}{ratio:>7}"
            f"{row['calls_per_s']:>10.0f}{row['throughput_vs_direct_stdio']:>11.2f}"
        )
    for pair, (wins, rounds) in result["rounds_at_or_below"].items():
        print(f"{pair}: at or below in {wins} of {rounds} rounds")
    if result["ratio_to_direct_http"]:
        print(
            "against direct Streamable HTTP:",
            ", ".join(f"{k} ×{v:.2f}" for k, v in result["ratio_to_direct_http"].items()),
        )
    print(f"engine memory (serve-http, after the run): {result['engine_rss_mib']} MiB")


if __name__ == "__main__":
    main()
