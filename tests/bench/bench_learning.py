"""Learning from use, by simulation on the public sets (figures, not pass/fail).

Each set's queries are shuffled (fixed seed) and cut in two halves. A simulated user works through
the first half with discover_tools (top 5): when a relevant tool is among the results, the user's
model calls it (each relevant tool shown), and the engine's `Learning` counts the pair exactly as
serving does (the query showed the tool, the same session called it). A query whose results show no
relevant tool teaches nothing. Then the second half is searched with what was learned and without,
and scored: hit@1 (the first result is relevant), hit@5 (a relevant tool in the top 5), R@5 (the
share of the query's relevant tools in the top 5). Then the halves swap (fold 2). `hurt@1` counts
the test queries whose first result was relevant without learning and is not with it.

    .venv/bin/python -m tests.bench.bench_learning [--json] [--repeats] [--sets azure-mcp ...] [--metatool-sample N]

`--repeats` adds a row where the learned half itself is searched again (the same requests
repeated: what the lift is for, not a figure of generalisation). `--learn-from any`: an upper bound
where the user always reaches a relevant tool (as if found by other means) and that still counts;
serving does not learn from those, so it is not the headline. The lift's constants were chosen on
fold 1 of azure-mcp and metatool; fold 2 and the other two sets were not looked at while choosing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcpmanager.core.proxy.learned import LearnedStore
from mcpmanager.core.proxy.learning import POOL, Learning
from mcpmanager.core.search.index import SearchIndex
from tests.bench.bench_search import DATA, SETS, BenchSet, docs_of, load

SHOWN = 5  # discover_tools' default limit: what a model sees
SEED = 17


@dataclass
class Scores:
    hit1: float = 0.0
    hit5: float = 0.0
    r5: float = 0.0

    def add(self, ranked: Sequence[str], relevant: set[str]) -> None:
        self.hit1 += bool(ranked[:1] and ranked[0] in relevant)
        self.hit5 += bool(relevant & set(ranked[:SHOWN]))
        self.r5 += len(relevant & set(ranked[:SHOWN])) / len(relevant)

    def mean(self, count: int) -> dict[str, float]:
        return {
            k: round(v / max(count, 1), 3) for k, v in (("hit@1", self.hit1), ("hit@5", self.hit5), ("R@5", self.r5))
        }


class Simulation:
    def __init__(self, bench: BenchSet) -> None:
        docs = docs_of(bench.tools)
        self.index = SearchIndex()
        self.index.replace_all(docs)
        self.name_of = {d.key: d.name for d in docs}
        self.key_of = {d.name: d.key for d in docs}
        self.texts = [f"{d.name} {d.description}" for d in docs]

    def learning(self) -> Learning:
        learning = Learning(LearnedStore(), clock=lambda: 0.0)
        learning.catalogue_changed(lambda: self.texts)
        return learning

    def plain(self, query: str) -> list[str]:
        return [self.name_of[h.key] for h in self.index.search(query, SHOWN)]

    def learned(self, learning: Learning, query: str) -> list[str]:
        """As `Discovery` ranks: the search's deeper pool, re-ranked by what was learned."""
        hits = [(h.key, h.score) for h in self.index.search(query, SHOWN + POOL)]
        return [self.name_of[key] for key, _ in learning.rerank(query, hits, SHOWN + POOL)[:SHOWN]]

    def learn(self, learning: Learning, queries: Sequence[dict[str, Any]], learn_from: str) -> int:
        """The user works through `queries`; how many pairs were learned."""
        taught = 0
        session = ("bench", 1)
        for case in queries:
            query, relevant = case["query"], [r for r in case["relevant"] if r in self.key_of]
            shown = self.learned(learning, query)
            called = [r for r in relevant if r in shown] if learn_from == "shown" else relevant
            keys = [self.key_of[name] for name in shown]
            keys += [self.key_of[name] for name in called if name not in shown]  # "any": as if shown
            learning.discovered(session, query, keys)
            for name in called:
                taught += learning.called(session, self.key_of[name]) is not None
        return taught

    def test(self, learning: Learning, queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
        before, after, hurt, counted = Scores(), Scores(), 0, 0
        started = time.perf_counter()
        for case in queries:
            relevant = {r for r in case["relevant"] if r in self.key_of}
            if not relevant:
                continue
            counted += 1
            plain, lifted = self.plain(case["query"]), self.learned(learning, case["query"])
            before.add(plain, relevant)
            after.add(lifted, relevant)
            hurt += bool(plain[:1] and plain[0] in relevant and not (lifted[:1] and lifted[0] in relevant))
        elapsed = time.perf_counter() - started
        return {"queries": counted, "without": before.mean(counted), "with": after.mean(counted), "hurt@1": hurt,
                "ms_per_query_pair": round(1000 * elapsed / max(counted, 1), 3)}  # fmt: skip


def run_set(bench: BenchSet, learn_from: str, repeats: bool = False) -> dict[str, Any]:
    """Both folds; `repeats`: also the learned half searched again (the same requests repeated)."""
    queries = list(bench.queries)
    random.Random(SEED).shuffle(queries)
    half = len(queries) // 2
    simulation = Simulation(bench)
    folds = {}
    for fold, (learn, test) in enumerate(((queries[:half], queries[half:]), (queries[half:], queries[:half])), 1):
        learning = simulation.learning()
        taught = simulation.learn(learning, learn, learn_from)
        learned = {"learned_pairs": len(learning.store), "lessons": taught}
        folds[f"fold{fold}"] = {**learned, **simulation.test(learning, test)}
        if repeats and fold == 1:
            folds["repeats"] = {**learned, **simulation.test(learning, learn)}
    return folds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--metatool-sample", type=int, default=2000, help="0 = all 21,041 queries")
    parser.add_argument("--learn-from", choices=("shown", "any"), default="shown")
    parser.add_argument("--repeats", action="store_true", help="also search the learned half again")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"bench_learning: no data at {DATA}", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"learn_from": args.learn_from, "sets": {}}
    for name in args.sets:
        bench = load(name, args.metatool_sample or None if name == "metatool" else None)
        report["sets"][name] = run_set(bench, args.learn_from, args.repeats)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"learning from use (learn from one half, test on the other; user calls: {args.learn_from})")
    columns = "hit@1 before→after   hit@5 before→after   R@5 before→after  hurt@1"
    print(f"{'set':<14}{'fold':<6}{'pairs':>6}{'tests':>7}   {columns}")
    for name, folds in report["sets"].items():
        for fold, row in folds.items():
            a, b = row["without"], row["with"]
            print(f"{name:<14}{fold:<6}{row['learned_pairs']:>6}{row['queries']:>7}   "
                  f"{a['hit@1']:.3f} → {b['hit@1']:.3f}        {a['hit@5']:.3f} → {b['hit@5']:.3f}        "
                  f"{a['R@5']:.3f} → {b['R@5']:.3f}    {row['hurt@1']:>4}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
