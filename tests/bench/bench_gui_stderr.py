"""The live stderr pane under a flood (figures, not pass/fail).

A real engine on a qasync loop runs one fixture server that writes N stderr lines at start as fast as
it can (`--flood N`); a shown `LogView` is attached to its log before the process is spawned, so it
sees every line. A heartbeat timer ticks every 5 ms and records the gaps between ticks: a gap far
beyond 5 ms is a UI stall. Target: worst stall ≤ 50 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_gui_stderr [--lines 100000] [--json]
        [--no-freeze-gc] [--profile]

Figures over the flood (first flood line in → last flood line shown): worst stall (max gap − 5 ms),
p99 gap, time until the last line is shown, lines per second that reached the view, lines skipped,
peak RSS growth of this process, block count at the end; and the full (oldest-generation) passes of
Python's cyclic garbage collector during the run. Those passes walk every object of the process and
stop the loop for 70-250 ms here; a flood makes them come sooner (its objects drive the collector's
clock). The app calls `gc.freeze()` once started, and so does this benchmark: the passes then skip what
was loaded and take about 1 ms. `--no-freeze-gc` shows the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import itertools
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync  # after the platform is chosen: Qt reads it when it loads
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from mcpmanager.core.config.load import load_config
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.engine.events import EngineEvent
from mcpmanager.core.supervisor.events import StatusChanged
from mcpmanager.core.supervisor.stderr_log import LogLine
from mcpmanager.core.system.paths import Paths
from mcpmanager.gui.log_view import LogView
from tests.helpers.fixture_servers import FAST, fixture, write_config

HEARTBEAT_MS = 5
SERVER = "noisy"


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * share), len(ordered) - 1)]


async def bench(lines: int, folder: Path, freeze_gc: bool = False, timeout: float = 120.0) -> dict[str, Any]:
    path = write_config(folder, {SERVER: fixture("--name", SERVER, "--flood", str(lines))}, supervisor=FAST)
    paths = Paths.resolve(config_file=path, env={"MCPMANAGER_HOME": str(folder / "home")})
    engine = Engine(load_config(path), paths, "discovery")
    view = LogView()
    view.resize(900, 600)
    view.show()
    last_text = f"flood line {lines - 1}"
    arrivals: list[float] = []  # when each batch of flood lines reached the log's listeners
    arrived = 0

    def on_lines(batch: list[LogLine]) -> None:
        # O(1) a batch, so the measuring does not slow the pump it measures: a batch that begins or
        # ends inside the flood counts whole (at most a few other lines, such as "ready").
        nonlocal arrived
        if batch[0].text.startswith("flood line ") or batch[-1].text.startswith("flood line "):
            arrivals.append(time.perf_counter())
            arrived += len(batch)

    def on_event(event: EngineEvent) -> None:
        # The first StatusChanged comes from Downstream.start(), after the engine registered the
        # Downstream and before its attempt task runs: attaching here misses no line.
        if isinstance(event, StatusChanged) and event.server == SERVER and view.log is None:
            log = engine.downstreams[SERVER].log
            view.attach(log)
            log.appended.connect(on_lines)

    engine.events.connect(on_event)
    ticks: list[float] = []
    rss: list[tuple[float, int]] = []
    shown_at: list[float] = []
    document = view.text_edit.document()

    def tick() -> None:
        now = time.perf_counter()
        ticks.append(now)
        if len(ticks) % 4 == 0:
            rss.append((now, _rss_kib()))
        if not shown_at and document.lastBlock().text().endswith(last_text):
            shown_at.append(now)

    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(tick)
    heartbeat.start()
    rss.append((time.perf_counter(), _rss_kib()))
    full_collections: list[float] = []  # ms each; the cyclic GC's full passes stop the loop too
    gc_started = 0.0

    def on_gc(phase: str, info: dict[str, int]) -> None:
        nonlocal gc_started
        if info["generation"] == 2:
            if phase == "start":
                gc_started = time.perf_counter()
            else:
                full_collections.append((time.perf_counter() - gc_started) * 1000)

    if freeze_gc:
        gc.collect()
        gc.freeze()  # as the app does after start-up: full passes then skip everything loaded so far
    gc.callbacks.append(on_gc)
    await engine.start()
    try:
        deadline = time.monotonic() + timeout
        while not shown_at and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        heartbeat.stop()
    finally:
        gc.callbacks.remove(on_gc)
        await engine.stop()
    if not shown_at or not arrivals:
        raise SystemExit(f"the last flood line was not shown within {timeout:g} s ({arrived} arrived)")
    start, end = arrivals[0], shown_at[0]
    window = [t for t in ticks if start <= t <= end + HEARTBEAT_MS / 1000]
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(window)] or [0.0]
    before = max((kib for t, kib in rss if t <= start), default=rss[0][1])
    peak = max((kib for t, kib in rss if start <= t <= end), default=before)
    flood_s = max(arrivals[-1] - start, 1e-9)
    return {
        "lines": lines,
        "worst_stall_ms": max(gaps) - HEARTBEAT_MS,
        "p99_gap_ms": _percentile(gaps, 0.99),
        "median_gap_ms": _percentile(gaps, 0.5),
        "last_line_shown_s": end - start,
        "last_line_shown_after_arrival_ms": (end - arrivals[-1]) * 1000,
        "lines_arrived": arrived,
        "lines_per_s": arrived / flood_s,
        "lines_skipped": view.skipped,
        "rss_growth_mib": (peak - before) / 1024,
        "block_count": document.blockCount(),
        "ticks": len(window),
        "full_gc_ms": [round(ms, 1) for ms in full_collections],
        "gc_frozen": freeze_gc,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=100_000, help="stderr lines the server floods (default 100,000)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="print where the loop's time went")
    parser.add_argument(
        "--no-freeze-gc", dest="freeze_gc", action="store_false", help="no gc.freeze() as the app does (docstring)"
    )
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as folder:
        if profiler is not None:
            profiler.enable()
        figures = qasync.run(bench(args.lines, Path(folder), args.freeze_gc))
        if profiler is not None:
            profiler.disable()
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(f"stderr flood of {figures['lines']:,} lines into the live pane (heartbeat every {HEARTBEAT_MS} ms):")
        rows = [
            ("worst UI stall", f"{figures['worst_stall_ms']:.1f} ms (target ≤ 50)"),
            ("p99 / median gap", f"{figures['p99_gap_ms']:.1f} / {figures['median_gap_ms']:.1f} ms"),
            ("last line shown after", f"{figures['last_line_shown_s']:.2f} s from the first flood line"),
            ("  … after it arrived", f"{figures['last_line_shown_after_arrival_ms']:.0f} ms"),
            ("lines reaching the view", f"{figures['lines_per_s']:,.0f} /s ({figures['lines_arrived']:,} lines)"),
            ("lines skipped", f"{figures['lines_skipped']:,}"),
            ("peak RSS growth", f"{figures['rss_growth_mib']:.1f} MiB"),
            ("blocks at the end", f"{figures['block_count']:,}"),
            ("full GC passes", ", ".join(f"{ms:g} ms" for ms in figures["full_gc_ms"]) or "none"),
        ]
        for label, value in rows:
            print(f"  {label:<24} {value}")
    if profiler is not None:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
