"""Engines as processes: their advertisements, their pids, stopping the ones a test started, waiting."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio

from mcpmanager.core.engine.advertisement import read_advertisements


async def wait_for(predicate: Any, timeout: float = 20.0, interval: float = 0.05) -> None:
    with anyio.fail_after(timeout):
        while True:
            value = predicate()
            if hasattr(value, "__await__"):
                value = await value
            if value:
                return
            await anyio.sleep(interval)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def home_token(home: Path) -> str:
    """The bearer token an engine under MCPMANAGER_HOME=home made for its HTTP endpoint."""
    return (home / "run" / "token").read_text(encoding="ascii").strip()


def engines(home: Path) -> list[dict[str, Any]]:
    return read_advertisements(home / "run")


def engine_pid(home: Path) -> int:
    [engine] = engines(home)
    return int(engine["pid"])


def stop_engines(home: Path, kill_servers: bool = False) -> None:
    """Engines `connect` started outlive their client on purpose: the test stops them. With
    `kill_servers`, their servers' process groups are killed while they stop, so that a server that
    ignores its stop (`--stubborn`) does not hold a test that is done with it for its whole grace."""
    pids = [int(info["pid"]) for info in engines(home)]
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        if kill_servers:  # (again on each turn: one the engine started before the signal was seen)
            for child in children(pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child, signal.SIGKILL)  # each server leads its own group
        time.sleep(0.05)
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def children(parents: list[int]) -> list[int]:
    """The pids of the live processes whose parent is one of `parents` (Linux: read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after its end
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) in parents:
                found.append(int(stat.parent.name))
    return found


def socket_sessions(path: str) -> int:
    """How many connections the engine has accepted on its local socket at `path` and holds now
    (Linux: an accepted socket is listed under its listener's path, connected)."""
    count = 0
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) == 8 and fields[7] == path and fields[5] == "03":  # St 03: connected
            count += 1
    return count


def watchdogs(home: Path) -> list[int]:
    """The live processes started with this home's runtime folder on their command line, the engine's
    watchdog among them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcpmanager.core.system.watchdog" in argv and str(home).encode() in b" ".join(argv):
                found.append(int(entry.name))
    return [pid for pid in found if pid_alive(pid)]
