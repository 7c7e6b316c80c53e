"""`mcpmanager serve --http` as a real subprocess for tests: its URL, token and stderr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.engines import home_token, wait_for
from tests.helpers.vaults import current_keyring_env

LISTENING = re.compile(r"serving (\d+) servers on (http://127\.0\.0\.1:\d+/mcp)")


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    count: int
    errlog: Path
    home: Path
    token: str


def spawn_serve_http(config: Path, home: Path, errlog: Path, mode: str = "direct") -> subprocess.Popen[bytes]:
    env = {"MCPMANAGER_HOME": str(home), "PYTHONUNBUFFERED": "1", "PATH": os.environ.get("PATH", "")}
    env |= current_keyring_env()  # the test's private keyring, never the user's
    command = [sys.executable, "-m", "mcpmanager", "serve", "--http", "--port", "0", "--mode", mode]
    with errlog.open("wb") as err:
        return subprocess.Popen(
            [*command, "--config", str(config)], env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )


@asynccontextmanager
async def serving_http(
    config: Path, home: Path, mode: str = "direct", errlog: Path | None = None
) -> AsyncIterator[Served]:
    """`mcpmanager serve --http --port 0 --mode MODE` as a subprocess; its URL read from its stderr
    (kept in `errlog`, by default in `home`)."""
    home.mkdir(parents=True, exist_ok=True)
    errlog = errlog or home / "serve-http-stderr.log"
    process = spawn_serve_http(config, home, errlog, mode)
    try:
        await wait_for(lambda: LISTENING.search(errlog.read_text()) or process.poll() is not None, timeout=30)
        found = LISTENING.search(errlog.read_text())
        assert found, f"serve --http exited {process.returncode}:\n{errlog.read_text()}"
        yield Served(process, found.group(2), int(found.group(1)), errlog, home, home_token(home))
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                await wait_for(lambda: process.poll() is not None, timeout=20)
            finally:
                if process.poll() is None:
                    process.kill()
        process.wait(timeout=10)
