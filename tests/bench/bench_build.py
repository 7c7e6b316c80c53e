"""The search index's build at 200, 2,000 and 20,000 tools, beside bm25s indexing the same tools
(figures, not pass/fail).

Ours: BM25F alone (`SearchIndex(semantic=False).replace_all`), the analyzer's cache emptied before
each build, as in a fresh engine. bm25s (not a dependency: `pip install bm25s PyStemmer` into the
venv to compare) tokenizes each tool's name, title, description, parameters and server with
English stop words and the Snowball stemmer, then indexes. The tools are the search benchmark's
pool (the four public sets, replicated under new names); builds alternate, median of `--rounds`.
Both stemmers keep a cache of words across builds; `--cold` empties ours and gives bm25s a new
stemmer (and so an empty cache) before each build, as in a new process.

    .venv/bin/python -m tests.bench.bench_build [--rounds 5] [--cold] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from mcpmanager.core.search import analyzer, stemmer
from mcpmanager.core.search.document import SearchDoc
from mcpmanager.core.search.index import SearchIndex
from tests.bench.bench_search import DATA, SETS, SIZES, docs_of, load, replicated


def ours(docs: list[SearchDoc], cold: bool) -> Callable[[], None]:
    def build() -> None:
        analyzer.analyze.cache_clear()
        if cold:
            stemmer.stem.cache_clear()
        SearchIndex(semantic=False).replace_all(docs)

    return build


def theirs(docs: list[SearchDoc], cold: bool) -> Callable[[], None] | None:
    try:
        import bm25s  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import Stemmer  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    english = Stemmer.Stemmer("english")
    texts = [" ".join([d.name, d.title, d.description, *(f"{n} {t}" for n, t in d.params), d.server]) for d in docs]

    def build() -> None:
        snowball = Stemmer.Stemmer("english") if cold else english
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=snowball, show_progress=False)
        bm25s.BM25().index(tokens, show_progress=False)

    return build


def measure(rounds: int, cold: bool = False) -> dict[str, Any]:
    pool = [t for name in SETS for t in load(name).tools]
    report: dict[str, Any] = {}
    for size in SIZES:
        docs = docs_of(replicated(pool, size))
        builds = {"mcpmanager": ours(docs, cold), "bm25s": theirs(docs, cold)}
        times: dict[str, list[float]] = {name: [] for name, build in builds.items() if build is not None}
        for _ in range(rounds):
            for name, build in builds.items():
                if build is not None:
                    gc.collect()
                    start = time.perf_counter()
                    build()
                    times[name].append(time.perf_counter() - start)
        report[str(size)] = {name: statistics.median(values) for name, values in times.items()}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="empty the stemmers' caches before each build")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"bench_build: no data at {DATA}", file=sys.stderr)
        return 2
    load_before = [round(x, 2) for x in os.getloadavg()]
    report = measure(args.rounds, args.cold)
    if args.json:
        print(json.dumps({"build_s": report, "cold": args.cold, "load_before": load_before}, indent=1))
        return 0
    print(f"load before: {load_before}" + ("  (stemmer caches emptied before each build)" if args.cold else ""))
    for size, row in report.items():
        cells = "  ".join(f"{name} {seconds:.3f} s" for name, seconds in row.items())
        print(f"{size:>6} tools: {cells}" + ("" if "bm25s" in row else "  (bm25s not installed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
