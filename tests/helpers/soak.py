"""The soak: many calls through `mcpmanager serve --stdio` to a server that crashes on a share of
them, each answer sorted into what it says (tests/e2e/test_faults.py asserts it on a short run,
tests/bench/bench_soak.py prints the figures of a long one)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers.clients import text_of
from tests.helpers.engines import engines, wait_for
from tests.helpers.fixture_servers import fixture

# Restarts quick and never a crash loop: the soak is about calls, not the crash-loop verdict.
SUPERVISOR = {"backoffInitial": 0.05, "backoffMax": 0.2, "crashLimit": 100000, "crashWindow": 60, "stopGrace": 1}
CUT_OFF = "the connection closed during the call"


@dataclass
class Soaked:
    answered: int = 0
    ok: int = 0
    cut_off: int = 0  # the call in flight when the server crashed
    other_errors: list[str] = field(default_factory=list)
    unanswered: int = 0
    restarts: int = 0
    engine_errors: list[str] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)  # the engine's, every `sample` calls


def _rss_kib(pid: int) -> int:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def soak(home: Path, calls: int, crash_rate: float, sample: int = 500, call_timeout: float = 60) -> Soaked:
    config = home / "soak.json"
    home.mkdir(parents=True, exist_ok=True)
    server = fixture("--name", "flaky", "--crash-rate", str(crash_rate))
    config.write_text(json.dumps({"mcpServers": {"flaky": server}, "supervisor": SUPERVISOR}))
    command = ["-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
    params = StdioServerParameters(command=sys.executable, args=command, env={"MCPMANAGER_HOME": str(home)})
    errlog_path = home / "engine-stderr.log"
    found = Soaked()
    with errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            with anyio.fail_after(60):
                while "echo" not in {t.name for t in (await client.list_tools()).tools}:
                    await anyio.sleep(0.1)
            pid = int(engines(home)[0]["pid"])
            for n in range(calls):
                if n % sample == 0:
                    found.rss_kib.append(_rss_kib(pid))
                try:
                    with anyio.fail_after(call_timeout):
                        result = await client.call_tool("echo", {"text": f"call {n}"})
                except TimeoutError:
                    found.unanswered += 1
                    continue
                found.answered += 1
                said = text_of(result)
                if not result.is_error and said == f"call {n}":
                    found.ok += 1
                elif result.is_error and CUT_OFF in said:
                    found.cut_off += 1
                else:
                    found.other_errors.append(said)
            found.rss_kib.append(_rss_kib(pid))
            # After a crash on one of the last calls, the restart (and the advertisement that counts
            # it, written a moment after each change) may still be on its way.
            await wait_for(lambda: engines(home)[0]["servers"]["flaky"]["state"] == "ready", timeout=30)
            found.restarts = int(engines(home)[0]["servers"]["flaky"]["restarts"])
    said = errlog_path.read_text()
    found.engine_errors = [line for line in said.splitlines() if " ERROR " in line or "Traceback" in line]
    return found
