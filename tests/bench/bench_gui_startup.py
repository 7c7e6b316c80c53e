"""The window on many real servers (figures, not pass/fail): how responsive it stays while they start.

    .venv/bin/python -m tests.bench.bench_gui_startup [--config FILE] [--screenshot PNG] [--json]

Runs the real app (`Manager`, as the `mcpmanager` command does) on a config of published servers —
by default `.cache/catalogue-servers/config.json`, the 27 servers of scripts/dump-real-catalogue.sh —
plus one server that crashes at start with a message on stderr. A heartbeat timer ticks every 5 ms on
the window's loop; a gap longer than that is time the window could not repaint or take input.
Reports: time until every server settled (ready, or failed for the crashing one), how many are
ready, tools listed, the worst stall and p99 gap, and the crashing server's state and stderr as the
window shows them. `--screenshot` captures the Servers page with the crashing server selected
(needs an X display: run it under Xvfb with QT_QPA_PLATFORM=xcb).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.core.tasks import spawn
from mcpmanager.gui.app import Manager
from mcpmanager.gui.errors import ErrorFunnel

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / ".cache" / "catalogue-servers" / "config.json"
CRASHING = 'echo "starting weather server" >&2; echo "fatal: OPENWEATHER_API_KEY is not set" >&2; exit 1'
HEARTBEAT_MS = 5


class Heartbeat:
    """Gaps between ticks (wall time), and how much of each the window's thread spent working (its
    CPU time): a long gap with little work is the machine's cores busy with the servers starting,
    not the window blocking itself."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.work: list[float] = []
        self._last = time.perf_counter()
        self._cpu = time.thread_time()
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last, self._cpu = time.perf_counter(), time.thread_time()
        self.timer.start(HEARTBEAT_MS)

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append(now - self._last)
        self.work.append(cpu - self._cpu)
        self._last, self._cpu = now, cpu


def make_config(source: Path, home: Path) -> Path:
    document = json.loads(source.read_text())
    document["mcpServers"]["weather"] = {"command": "sh", "args": ["-c", CRASHING]}
    document["supervisor"] = {**document.get("supervisor", {}), "crashLimit": 3, "startTimeout": 60}
    path = home / "config.json"
    path.write_text(json.dumps(document))
    return path


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def drive(
    manager: Manager, beat: Heartbeat, figures: dict[str, Any], screenshot: Path | None, groups: list[int]
) -> None:
    try:
        began = time.perf_counter()
        await manager.started.wait()
        window, ctx = manager.window, manager.ctx
        assert window is not None and ctx is not None
        figures["window_shown_s"] = round(time.perf_counter() - began, 2)
        beat.start()
        downstreams = ctx.engine.downstreams

        def settled() -> bool:
            return all(d.status.state in (State.READY, State.FAILED, State.DISABLED) for d in downstreams.values())

        deadline = time.monotonic() + 180
        while not settled() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        figures["all_settled_s"] = round(time.perf_counter() - began, 2)
        beat.timer.stop()
        others = [d for name, d in downstreams.items() if name != "weather"]
        figures["servers"] = len(others)
        figures["ready"] = sum(1 for d in others if d.status.state is State.READY)
        figures["not_ready"] = {d.name: d.state_line() for d in others if d.status.state is not State.READY}
        figures["tools"] = len(ctx.engine.catalogue.tools())
        groups.extend(d.process.pid for d in others if d.process is not None and d.process.pid)
        weather = downstreams["weather"]
        window.servers.select("weather")
        await asyncio.sleep(1.0)
        figures["crashing_state"] = weather.status.state.value
        figures["crashing_row"] = weather.state_line()
        figures["crashing_pane_tail"] = window.servers.detail.log_view.text().splitlines()[-3:]
        gaps, work = sorted(beat.gaps), sorted(beat.work)
        figures["ticks"] = len(gaps)
        figures["worst_gap_ms"] = round(1000 * gaps[-1] - HEARTBEAT_MS, 1) if gaps else None
        figures["p99_gap_ms"] = round(1000 * gaps[int(0.99 * (len(gaps) - 1))], 1) if gaps else None
        figures["worst_work_in_a_gap_ms"] = round(1000 * work[-1], 1) if work else None
        figures["p99_work_in_a_gap_ms"] = round(1000 * work[int(0.99 * (len(work) - 1))], 1) if work else None
        figures["load_average"] = round(os.getloadavg()[0], 1)
        if screenshot is not None:
            window.resize(1280, 860)
            window.move(0, 0)
            await asyncio.sleep(1.0)
            geometry = window.frameGeometry()
            crop = f"{geometry.width()}x{geometry.height()}+{geometry.x()}+{geometry.y()}"
            grab = await asyncio.create_subprocess_exec("import", "-window", "root", "-crop", crop, str(screenshot))
            figures["screenshot"] = str(screenshot) if await grab.wait() == 0 else None
    finally:
        manager.quit.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=DEFAULT)
    parser.add_argument("--screenshot", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.config.exists():
        print(f"no config at {args.config}: run scripts/dump-real-catalogue.sh first", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mcpmanager-bench-") as folder:
        home = Path(folder)
        paths = Paths.resolve(config_file=make_config(args.config, home), env={"MCPMANAGER_HOME": str(home)})
        manager = Manager(paths, ErrorFunnel())
        beat = Heartbeat()
        groups: list[int] = []  # each server runs in its own session: its pid is its process group

        async def run() -> None:
            driver = spawn(drive(manager, beat, figures, args.screenshot, groups), name="bench")
            await manager.run()
            await driver

        qasync.run(run())
        figures["process_groups_left_after_quit"] = sum(1 for g in groups if group_alive(g))
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for key, value in figures.items():
            print(f"{key:>20}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
