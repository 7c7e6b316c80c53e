"""Engine benchmarks (figures, not pass/fail).

1. The latency a trivial call gains through `mcpmanager serve --stdio` over calling the same fixture
   server directly: median and p95 of N calls each way (target ≤ 1 ms added at the median).
2. Time from launch to a complete catalogue with 10 servers that each take 2 s to start (target: about
   the slowest one, not the sum).

    .venv/bin/python -m tests.bench.bench_engine [--calls 500] [--era legacy|auto] [--json]

`--era auto` measures the calls in the 2026-07-28 era (the client's default); `legacy` (the
default here, for figures comparable with earlier runs) in the handshake era.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "servers" / "fixture_server.py"


def _params(args: list[str], home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=args, env={"MCPMANAGER_HOME": str(home)})


async def _time_calls(params: StdioServerParameters, tool: str, calls: int, errlog: Any, era: str) -> list[float]:
    async with Client(stdio_client(params, errlog=errlog), mode=era, cache=None) as client:
        with anyio.fail_after(60):
            while tool not in {t.name for t in (await client.list_tools()).tools}:
                await anyio.sleep(0.1)
        for _ in range(20):  # warm up both sides
            await client.call_tool(tool, {"text": "x"})
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            await client.call_tool(tool, {"text": "x"})
            samples.append((time.perf_counter() - start) * 1000)
        return samples


def _p95(samples: list[float]) -> float:
    return sorted(samples)[int(len(samples) * 0.95) - 1]


async def bench_latency(calls: int, home: Path, era: str = "legacy") -> dict[str, float]:
    config = home / "latency.json"
    config.write_text(json.dumps({"mcpServers": {"f": {"command": sys.executable, "args": [str(FIXTURE)]}}}))
    with (home / "stderr.log").open("w") as errlog:
        direct = await _time_calls(_params([str(FIXTURE)], home), "echo", calls, errlog, era)
        serve = ["-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
        proxied = await _time_calls(_params(serve, home), "echo", calls, errlog, era)
    return {
        "direct_median_ms": statistics.median(direct),
        "direct_p95_ms": _p95(direct),
        "proxy_median_ms": statistics.median(proxied),
        "proxy_p95_ms": _p95(proxied),
        "added_median_ms": statistics.median(proxied) - statistics.median(direct),
        "added_p95_ms": _p95(proxied) - _p95(direct),
    }


async def bench_startup(servers: int, delay: float, home: Path) -> dict[str, float]:
    from mcpmanager.core.config.load import parse_config
    from mcpmanager.core.engine.engine import Engine
    from mcpmanager.core.system.paths import Paths

    document = {
        "mcpServers": {
            f"s{i}": {"command": sys.executable, "args": [str(FIXTURE), "--start-delay", str(delay)]}
            for i in range(servers)
        }
    }
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(home / f"startup-{servers}")})
    engine = Engine(parse_config(json.dumps(document), "bench"), paths, "direct")
    start = time.perf_counter()
    await engine.start()
    try:
        while len({t.server for t in engine.catalogue.tools()}) < servers:
            await anyio.sleep(0.01)
        elapsed = time.perf_counter() - start
    finally:
        await engine.stop()
    return {
        "servers": servers,
        "start_delay_s": delay,
        "complete_catalogue_s": elapsed,
        "sum_of_delays_s": servers * delay,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--era", choices=["legacy", "auto"], default="legacy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        latency = anyio.run(bench_latency, args.calls, home, args.era)
        startup = anyio.run(bench_startup, 10, 2.0, home)
        startup["one_server_alone_s"] = anyio.run(bench_startup, 1, 2.0, home)["complete_catalogue_s"]
    if args.json:
        print(json.dumps({"latency": latency, "startup": startup}, indent=1))
        return
    print(f"trivial call, {args.calls} calls each way (ms):")
    print(f"  direct   median {latency['direct_median_ms']:.2f}  p95 {latency['direct_p95_ms']:.2f}")
    print(f"  proxied  median {latency['proxy_median_ms']:.2f}  p95 {latency['proxy_p95_ms']:.2f}")
    print(f"  added    median {latency['added_median_ms']:.2f}  p95 {latency['added_p95_ms']:.2f}")
    print(
        f"complete catalogue, {startup['servers']} servers × {startup['start_delay_s']:g} s start: "
        f"{startup['complete_catalogue_s']:.2f} s "
        f"(one such server alone: {startup['one_server_alone_s']:.2f} s; "
        f"the sum would be {startup['sum_of_delays_s']:g} s)"
    )


if __name__ == "__main__":
    main()
