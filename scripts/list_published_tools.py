"""Start every server of an mcpmanager config with the MCP SDK client and list its tools.

    .venv/bin/python scripts/list_published_tools.py                     # .cache/published/config.json
    .venv/bin/python scripts/list_published_tools.py --dump catalogue.json
    .venv/bin/python scripts/list_published_tools.py --config other.json --only time git --timeout 20

Prints `server: N tools, protocol <version>, start <seconds>s` per server (start = spawn to connected),
or `server: FAILED (...)` with the end of its stderr. `--dump FILE` writes a JSON list of
{"server", "name", "description", "inputSchema", "annotations"} for every tool listed: the real-world
catalogue that tests and benchmarks use. Exits 1 when a server other than the deliberately broken ones
(`missing`, `exits`) fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / ".cache" / "published" / "config.json"
EXPECTED_BROKEN = {"missing", "exits"}
MAX_PAGES = 100


async def list_server(name: str, entry: dict[str, Any], timeout: float) -> dict[str, Any]:
    params = StdioServerParameters(
        command=entry["command"], args=list(entry.get("args") or []), env=entry.get("env") or None
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        started = time.perf_counter()
        try:
            with anyio.fail_after(timeout):
                async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                    start = time.perf_counter() - started
                    tools: list[Any] = []
                    cursor: str | None = None
                    for _ in range(MAX_PAGES):
                        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                        tools.extend(page.tools)
                        cursor = page.next_cursor
                        if cursor is None:
                            break
                    listed = time.perf_counter() - started
                    return {
                        "server": name,
                        "ok": True,
                        "protocol": client.protocol_version,
                        "start": start,
                        "listed": listed,
                        "tools": tools,
                    }
        except Exception as exc:  # report any failure (fail_after turns its cancellation into TimeoutError)
            errlog.seek(0)
            tail = errlog.read().strip().splitlines()[-3:]
            error: BaseException = exc
            while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]
            reason = "timeout" if isinstance(error, TimeoutError) else f"{type(error).__name__}: {error}"
            return {"server": name, "ok": False, "reason": reason, "stderr": tail}


def tool_record(server: str, tool: Any) -> dict[str, Any]:
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json") if tool.annotations else None
    )
    return {
        "server": server,
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": annotations,
    }


async def list_all(servers: dict[str, dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for name, entry in servers.items():  # one at a time: start times are not skewed by the others
        result = await list_server(name, entry, timeout)
        results.append(result)
        if result["ok"]:
            print(
                f"{name}: {len(result['tools'])} tools, protocol {result['protocol']}, "
                f"start {result['start']:.2f}s (listed at {result['listed']:.2f}s)",
                flush=True,
            )
        else:
            note = " (expected)" if name in EXPECTED_BROKEN else ""
            print(f"{name}: FAILED{note} ({result['reason']})", flush=True)
            for line in result["stderr"]:
                print(f"    stderr: {line}", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="mcpmanager config (mcpServers)")
    parser.add_argument("--dump", metavar="FILE", help="write every tool as JSON to FILE")
    parser.add_argument("--only", nargs="+", metavar="SERVER", help="list only these servers")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per server (default 60)")
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    servers: dict[str, dict[str, Any]] = config["mcpServers"]
    unknown = set(args.only or []) - set(servers)
    if unknown:
        print(f"unknown servers: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    chosen = {name: entry for name, entry in servers.items() if not args.only or name in args.only}
    results = anyio.run(list_all, chosen, args.timeout)
    ok = [r for r in results if r["ok"]]
    total = sum(len(r["tools"]) for r in ok)
    print(f"total: {total} tools from {len(ok)} of {len(results)} servers")
    if args.dump:
        records = [tool_record(r["server"], t) for r in ok for t in r["tools"]]
        Path(args.dump).write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(records)} tools to {args.dump}")
    failed = [r["server"] for r in results if not r["ok"] and r["server"] not in EXPECTED_BROKEN]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
