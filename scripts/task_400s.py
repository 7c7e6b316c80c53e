"""A 400 s job through `mcpmanager serve --stdio` with the DEFAULT settings (callTimeout 300 s), for a
client that takes tasks and for one that does not, at once; prints how long each took. Run by hand
from the repository (it takes about seven minutes; not part of the test command):

    .venv/bin/python scripts/task_400s.py [SECONDS]

The server is the tests' task fixture (`tests/helpers/task_server.py`), twice: `one` over stdio
speaking only the handshake era (the 2025-11-25 tasks utility), `two` the same over stdio in the
2026-07-28 era (the tasks extension). The task client (2026-07-28, declaring the extension) calls
`two__slow_job` and polls `tasks/get`; the plain client (handshake era) calls `one__slow_job` and
waits for its answer, which mcpmanager gives once the task it runs on the server has ended."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmanager.core.sdk_compat import send_raw

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = "io.modelcontextprotocol/tasks"


def client_params(config: Path, home: Path) -> StdioServerParameters:
    command = ["-m", "mcpmanager", "serve", "--stdio", "--mode", "direct", "--config", str(config)]
    env = {"MCPMANAGER_HOME": str(home), "PYTHONUNBUFFERED": "1", "PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(command=sys.executable, args=command, env=env, cwd=str(ROOT))


async def until_listed(client: Client, name: str) -> None:
    while name not in {t.name for t in (await client.list_tools()).tools}:
        await anyio.sleep(0.2)


async def task_client(config: Path, home: Path, seconds: float, out: dict[str, Any]) -> None:
    with (home / "client.log").open("a") as errlog:
        transport = stdio_client(client_params(config, home), errlog=errlog)
        async with Client(transport, mode="auto", cache=None) as client:
            await until_listed(client, "two__slow_job")
            started = time.monotonic()
            arguments = {"seconds": seconds, "label": "task-client"}
            call = {"name": "two__slow_job", "arguments": arguments}
            created = await send_raw(client, "tools/call", call, 60, extensions={EXTENSION: {}})
            out["task created"] = {k: created.get(k) for k in ("resultType", "taskId", "status", "pollIntervalMs")}
            polls = 0
            while True:
                got = await send_raw(client, "tasks/get", {"taskId": created["taskId"]}, 60, extensions={EXTENSION: {}})
                polls += 1
                if got["status"] in ("completed", "failed", "cancelled"):
                    break
                await anyio.sleep(5)
            out["task client"] = {
                "seconds": round(time.monotonic() - started, 1),
                "status": got["status"],
                "result": got.get("result"),
                "polls": polls,
            }


async def plain_client(config: Path, home: Path, seconds: float, out: dict[str, Any]) -> None:
    with (home / "client.log").open("a") as errlog:
        transport = stdio_client(client_params(config, home), errlog=errlog)
        async with Client(transport, mode="legacy", cache=None) as client:
            await until_listed(client, "one__slow_job")
            started = time.monotonic()
            result = await client.call_tool(
                "one__slow_job", {"seconds": seconds, "label": "plain-client"}, read_timeout_seconds=seconds + 120
            )
            out["plain client"] = {
                "seconds": round(time.monotonic() - started, 1),
                "is_error": result.is_error,
                "text": [getattr(c, "text", None) for c in result.content],
            }


async def main(seconds: float) -> None:
    folder = Path(tempfile.mkdtemp(prefix="task400-"))
    fixture = ["-m", "tests.helpers.task_server"]
    servers = {
        "one": {"command": sys.executable, "args": [*fixture, "--handshake-only"], "cwd": str(ROOT)},
        "two": {"command": sys.executable, "args": fixture, "cwd": str(ROOT)},
    }
    config = folder / "config.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")  # every setting at its default
    out: dict[str, Any] = {"job seconds": seconds, "folder": str(folder)}
    async with anyio.create_task_group() as group:
        (folder / "a").mkdir()
        (folder / "b").mkdir()
        group.start_soon(task_client, config, folder / "a", seconds, out)
        group.start_soon(plain_client, config, folder / "b", seconds, out)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    anyio.run(main, float(sys.argv[1]) if len(sys.argv) > 1 else 400.0)
