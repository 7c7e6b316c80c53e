"""Search on the development query set (figures, not pass/fail).

The set is tests/data/search/dev_queries.jsonl (see tests/data/search/README.md): 240 requests
written as a user would write them, over two real catalogues (tests/data/catalogues/published.json
and livemcpbench.json). It is a development set: tuning on it is allowed.

Each catalogue is indexed as bench_search does it (`docs_of`, `SearchIndex.replace_all`); every
query is run with limit 10. A query's needs are its `relevant_groups` (one list of alternatives per
needed tool) or, without them, one need served by any key of `relevant`. A query is a hit at k when
every need has one of its keys ("server:name") in the top k; MRR@10 uses the first rank at which all
needs are met (0 past 10). Figures: hit@1, hit@5, MRR@10 overall, per style, per catalogue, per half.

    .venv/bin/python -m tests.bench.bench_dev_search [--json] [--bm25f] [--encoder] [--misses]

--bm25f: BM25F alone (the index built with semantic=False, as bench_search's bm25f row).
--encoder: the opt-in sentence encoder as the semantic side (`proxy.semanticModel: "encoder"`).
--misses: also list the queries missed at 5, with the top 5 they got.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpmanager.core.search.index import SearchIndex
from mcpmanager.core.search.semantic import ModelName, SemanticIndex
from tests.bench.bench_search import docs_of

DATA = Path(__file__).resolve().parents[1] / "data"
QUERIES = DATA / "search" / "dev_queries.jsonl"
CATALOGUES = ("published", "livemcpbench")
STYLES = ("paraphrase", "domain", "lexical")
HALVES = ("tune", "heldout")
LIMIT = 10


@dataclass(frozen=True)
class Outcome:
    query: dict[str, Any]
    got: list[str]  # "server:name" keys, best first
    rank: int | None  # first rank at which every need is met, None if not within LIMIT

    def hit(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k


def load_queries(path: Path = QUERIES) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_catalogue(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((DATA / "catalogues" / f"{name}.json").read_text(encoding="utf-8"))
    return tools


def needs_of(query: dict[str, Any]) -> list[set[str]]:
    groups = query.get("relevant_groups")
    if groups:
        return [set(group) for group in groups]
    return [set(query["relevant"])]


def first_full_rank(got: Sequence[str], needs: Sequence[set[str]]) -> int | None:
    """The 1-based rank at which every need has one of its keys, or None."""
    open_needs = list(needs)
    for rank, key in enumerate(got, 1):
        open_needs = [need for need in open_needs if key not in need]
        if not open_needs:
            return rank
    return None


def check_keys(queries: Iterable[dict[str, Any]], keys: dict[str, set[str]]) -> None:
    """Refuse to score a set that names a tool its catalogue does not have."""
    unknown = [
        (q["id"], key)
        for q in queries
        for key in {*q["relevant"], *(k for g in q.get("relevant_groups", []) for k in g)}
        if key not in keys[q["catalogue"]]
    ]
    if unknown:
        raise SystemExit(f"bench_dev_search: unknown keys {unknown}")


def run(
    queries: Sequence[dict[str, Any]], semantic: bool, model: ModelName = "static"
) -> tuple[list[Outcome], dict[str, float]]:
    outcomes: list[Outcome] = []
    timings: dict[str, float] = {}
    keys: dict[str, set[str]] = {}
    indexes: dict[str, SearchIndex] = {}
    for name in CATALOGUES:
        tools = load_catalogue(name)
        keys[name] = {f"{t['server']}:{t['name']}" for t in tools}
        index = SearchIndex(semantic=SemanticIndex(model=model) if semantic else False)
        start = time.perf_counter()
        index.replace_all(docs_of(tools))
        timings[f"build_{name}_s"] = time.perf_counter() - start
        indexes[name] = index
    check_keys(queries, keys)
    start = time.perf_counter()
    for query in queries:
        hits = indexes[query["catalogue"]].search(query["query"], LIMIT)
        got = [str(hit.key) for hit in hits]
        stray = [key for key in got if key not in keys[query["catalogue"]]]
        if stray:
            raise SystemExit(f"bench_dev_search: hit keys are not server:name: {stray[:3]}")
        outcomes.append(Outcome(query, got, first_full_rank(got, needs_of(query))))
    timings["query_mean_ms"] = (time.perf_counter() - start) * 1000 / max(1, len(queries))
    return outcomes, timings


def figures(outcomes: Sequence[Outcome]) -> dict[str, float]:
    n = len(outcomes)
    if not n:
        return {"n": 0, "hit@1": 0.0, "hit@5": 0.0, "MRR@10": 0.0}
    return {
        "n": n,
        "hit@1": sum(o.hit(1) for o in outcomes) / n,
        "hit@5": sum(o.hit(5) for o in outcomes) / n,
        "MRR@10": sum(1.0 / o.rank for o in outcomes if o.rank is not None) / n,
    }


def report(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {"all": figures(outcomes)}
    for style in STYLES:
        rows[f"style {style}"] = figures([o for o in outcomes if o.query["style"] == style])
    for name in CATALOGUES:
        rows[f"catalogue {name}"] = figures([o for o in outcomes if o.query["catalogue"] == name])
    for half in HALVES:
        rows[f"half {half}"] = figures([o for o in outcomes if o.query["half"] == half])
    for name in CATALOGUES:
        for style in STYLES:
            chosen = [o for o in outcomes if o.query["catalogue"] == name and o.query["style"] == style]
            rows[f"{name} / {style}"] = figures(chosen)
    return rows


def misses(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    return [
        {
            "id": o.query["id"],
            "style": o.query["style"],
            "query": o.query["query"],
            "relevant": o.query["relevant"],
            "rank": o.rank,
            "top5": o.got[:5],
        }
        for o in outcomes
        if not o.hit(5)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--bm25f", action="store_true", help="BM25F alone (no semantic part)")
    parser.add_argument("--encoder", action="store_true", help="the sentence encoder as the semantic side")
    parser.add_argument("--misses", action="store_true", help="list the queries missed at 5")
    args = parser.parse_args(argv)
    queries = load_queries()
    outcomes, timings = run(queries, semantic=not args.bm25f, model="encoder" if args.encoder else "static")
    document: dict[str, Any] = {
        "search": "bm25f" if args.bm25f else "hybrid (encoder)" if args.encoder else "hybrid",
        "queries": len(queries),
        "figures": report(outcomes),
        "timings": timings,
    }
    if args.misses:
        document["misses"] = misses(outcomes)
    if args.json:
        print(json.dumps(document, indent=1, ensure_ascii=False))
        return 0
    print(f"dev search set, {document['search']}, {len(queries)} queries, limit {LIMIT}")
    print(f"{'view':<28}{'n':>5}{'hit@1':>8}{'hit@5':>8}{'MRR@10':>8}")
    for view, row in document["figures"].items():
        print(f"{view:<28}{int(row['n']):>5}{row['hit@1']:>8.3f}{row['hit@5']:>8.3f}{row['MRR@10']:>8.3f}")
    print("  ".join(f"{k} {v:.3f}" for k, v in timings.items()))
    for miss in document.get("misses", []):
        rank = "-" if miss["rank"] is None else miss["rank"]
        print(f"\n{miss['id']} [{miss['style']}] {miss['query']!r}  (rank {rank})")
        print(f"  want: {', '.join(miss['relevant'])}")
        for i, key in enumerate(miss["top5"], 1):
            print(f"  {i}. {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
