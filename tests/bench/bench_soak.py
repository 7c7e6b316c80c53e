"""The soak (figures, not pass/fail): N calls through `mcpmanager serve --stdio` to a server that
crashes on a share of them (exit 3 on receiving the call).

    .venv/bin/python -m tests.bench.bench_soak [--calls 5000] [--crash-rate 0.01] [--json]

What should hold (issue 15): every call answered, no engine error, the engine's memory flat, and
no call cut off but the one in flight at each crash (cut-off calls = restarts).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import anyio

from tests.helpers.soak import soak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--crash-rate", type=float, default=0.01)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        found = anyio.run(soak, Path(home), args.calls, args.crash_rate)
        seconds = time.perf_counter() - start
    figures = {**asdict(found), "seconds": seconds, "other_errors": found.other_errors[:5]}
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    rss = [kib / 1024 for kib in found.rss_kib]
    print(f"{args.calls} calls, crash rate {args.crash_rate:g}, {seconds:.0f} s:")
    print(f"  answered {found.answered}, unanswered {found.unanswered}")
    print(f"  ok {found.ok}, cut off at a crash {found.cut_off} (restarts {found.restarts}), "
          f"other errors {len(found.other_errors)}")  # fmt: skip
    print(f"  engine errors {len(found.engine_errors)}")
    print(f"  engine RSS MiB every 500 calls: {' '.join(f'{r:.0f}' for r in rss)}")
    for said in found.other_errors[:5]:
        print(f"  e.g. {said[:200]!r}")


if __name__ == "__main__":
    main()
