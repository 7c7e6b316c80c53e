"""How long a client waits for `mcpmanager connect` to answer `initialize` (figures, not pass/fail).

The client is the SDK's `Client` over stdio, launching `python -m mcpmanager connect` with the small
environment clients give (no DISPLAY: the headless engine is what starts). Timed from launching the
command to the `initialize` answer, in the legacy (handshake) era.

- cold: no engine runs; `connect` starts one in the background and waits for it (a fresh home each
  run, with two fixture servers in its config). Target < 5 s.
- warm: an engine runs; `connect` reaches it. Target < 1 s.

`--display :99` gives the client a display (an X server such as Xvfb must serve it): `connect` then
starts the app into the tray, the window's engine, as on a desktop.

    .venv/bin/python -m tests.bench.bench_connect [--runs 5] [--display :99] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers.clients import bridge_env
from tests.helpers.engines import stop_engines
from tests.helpers.fixture_servers import engine_home


async def initialize_time(home: Path, display: str | None) -> float:
    env = {**bridge_env(home), **({"DISPLAY": display} if display else {})}
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcpmanager", "connect"], env=env)
    started = time.perf_counter()
    with (home / "connect-stderr.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None):
            return time.perf_counter() - started


async def measure(runs: int, display: str | None) -> dict[str, list[float]]:
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-connect-") as scratch:
        for index in range(runs):
            home = engine_home(Path(scratch) / f"home-{index}")
            try:
                cold.append(await initialize_time(home, display))
                for _ in range(runs):
                    warm.append(await initialize_time(home, display))
            finally:
                stop_engines(home)
    return {"cold": cold, "warm": warm}


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold starts (each followed by as many warm ones)")
    parser.add_argument("--display", help="an X display for the started app (it then starts into the tray)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {kind: summary(values) for kind, values in asyncio.run(measure(args.runs, args.display)).items()}
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for kind, target in (("cold", "< 5 s"), ("warm", "< 1 s")):
        f = figures[kind]
        print(
            f"{kind}: initialize answered in p50 {f['p50']:.2f} s "
            f"(min {f['min']:.2f}, max {f['max']:.2f}, {f['n']:.0f} runs); target {target}"
        )


if __name__ == "__main__":
    main()
