"""A server stopped while its process is being spawned (a quit right after launch, a config change
during a start) leaves no child behind: every child is reaped by the loop that spawned it, so none
is found running later ("subprocess N is still running") in another test or loop."""

from __future__ import annotations

import gc
import os
import sys
import uuid
import warnings
from pathlib import Path

import anyio
import anyio.lowlevel

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.lifecycle import State

SETTINGS = SupervisorSettings(start_timeout=5, stop_grace=0.5)


def children_with(marker: str) -> list[int]:
    """Our child processes whose command line carries `marker`, zombies (not yet reaped) included."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == os.getpid() and (marker.encode() in command or fields[0] == "Z"):
            found.append(int(stat.parent.name))
    return found


async def test_a_stop_at_any_point_of_the_spawn_leaves_no_child() -> None:
    marker = f"spawn-{uuid.uuid4().hex}"
    script = f"import sys  # {marker}\nsys.stdin.read()"  # a server that ends on stdin's EOF
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Land the stop after 0, 1, 2… passes of the loop: before, during and after the spawn.
        for passes in range(12):
            downstream = Downstream(StdioServerConfig("s", sys.executable, ["-c", script]), SETTINGS, None, print)
            downstream.start()
            for _ in range(passes):
                await anyio.lowlevel.checkpoint()
            await downstream.stop()
            assert downstream.status.state is State.STOPPED
            assert children_with(marker) == [], f"stopped after {passes} passes, the child is not reaped"
            if passes == 0:  # stopped before its attempt began: nothing was spawned (or waited for)
                assert downstream.log.tail(5) == []
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
