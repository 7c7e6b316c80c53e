"""A huge tool result through `mcpmanager serve --stdio` (figures, not pass/fail): the engine's CPU
time and its peak memory above what it used before the call, for a result of N MiB.

    .venv/bin/python -m tests.bench.bench_huge [--mib 50] [--json]

Targets (issue 15): at most 2 s of engine CPU for 50 MiB, and a peak about twice the result. The
client speaks raw JSON-RPC lines, so nothing but the engine parses the result in between.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "servers" / "fixture_server.py"


def _cpu_seconds(pid: int) -> float:
    fields = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _memory_kib(pid: int, key: str) -> int:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise KeyError(key)


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the engine closed its stdout")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def bench(mib: float, home: Path) -> dict[str, float]:
    config = home / "config.json"
    server = {"command": sys.executable, "args": [str(FIXTURE), "--big"]}
    config.write_text(json.dumps({"mcpServers": {"f": server}}))
    command = [sys.executable, "-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
    env = {**os.environ, "MCPMANAGER_HOME": str(home)}
    with (home / "stderr.log").open("wb") as errlog:
        engine = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env)
    assert engine.stdin is not None and engine.stdout is not None
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        _send(engine.stdin, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        _answer(engine.stdout, 0)
        _send(engine.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for request_id in range(1, 200):  # until the server is up and `big` is listed
            _send(engine.stdin, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
            if any(t["name"] == "big" for t in _answer(engine.stdout, request_id)["result"]["tools"]):
                break
            time.sleep(0.1)
        small = {"name": "big", "arguments": {"mib": 0.001}}
        _send(engine.stdin, {"jsonrpc": "2.0", "id": 1000, "method": "tools/call", "params": small})
        _answer(engine.stdout, 1000)  # warm: the call path is loaded
        rss_before = _memory_kib(engine.pid, "VmRSS")
        cpu_before = _cpu_seconds(engine.pid)
        start = time.perf_counter()
        _send(
            engine.stdin,
            {
                "jsonrpc": "2.0",
                "id": 1001,
                "method": "tools/call",
                "params": {"name": "big", "arguments": {"mib": mib}},
            },
        )
        answer = _answer(engine.stdout, 1001)
        elapsed = time.perf_counter() - start
        cpu = _cpu_seconds(engine.pid) - cpu_before
        peak = _memory_kib(engine.pid, "VmHWM")
        size = len(answer["result"]["content"][0]["text"]) / (1 << 20)
        return {
            "result_mib": size,
            "seconds": elapsed,
            "engine_cpu_s": cpu,
            "rss_before_mib": rss_before / 1024,
            "peak_rss_mib": peak / 1024,
            "peak_growth_mib": (peak - rss_before) / 1024,
            "growth_per_result": (peak - rss_before) / 1024 / size,
        }
    finally:
        engine.stdin.close()
        try:
            engine.wait(30)
        except subprocess.TimeoutExpired:
            engine.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        figures = bench(args.mib, Path(home))
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f"a {figures['result_mib']:.0f} MiB result through serve --stdio:")
    print(f"  {figures['seconds']:.2f} s, engine CPU {figures['engine_cpu_s']:.2f} s")
    print(f"  engine memory {figures['rss_before_mib']:.0f} MiB before, peak {figures['peak_rss_mib']:.0f} MiB")
    print(f"  peak growth {figures['peak_growth_mib']:.0f} MiB = {figures['growth_per_result']:.1f} x the result")


if __name__ == "__main__":
    main()
