"""Search benchmarks (figures, not pass/fail).

1. Retrieval quality on the public sets in ../shared/bench-data (relative to the project root):
   R@1, R@5, R@10, nDCG@10 and MRR, beside the README's baseline (b). Recall@k is the share of a
   query's relevant tools in the top k, averaged; sets with `relevant_groups` are also scored with
   "any tool of a group is enough" (the `groups` rows).
   Search is the hybrid (BM25F fused with the static vectors, `core/search/hybrid.py`); the `bm25f`
   row is BM25F alone, and `half A`/`half B` split the queries by a hash of their text (the fusion's
   weight was chosen on half A: half B is the figure nobody tuned on).
2. Query latency (p50/p95) and index build time at 200, 2,000 and 20,000 tools (real catalogues
   replicated under distinct names), hybrid and BM25F alone, plus the cost of an incremental update.
3. The static vectors: load time, memory, and the size they add to the installed package.

--encoder: the same with the opt-in sentence encoder as the semantic side (`proxy.semanticModel:
"encoder"`). Its tools' vectors are computed once and shared by the three sizes (a tool costs
milliseconds to embed: that time is reported apart, for 2,000 tools and for all 20,000).

    .venv/bin/python -m tests.bench.bench_search [--json] [--sets azure-mcp ...] [--metatool-sample N] [--encoder]

Targets: R@5 above baseline (b) on every set and +5 points on average; azure-mcp R@1 ≥ 0.85; query
p50 ≤ 2 ms at 2,000 tools (hybrid; BM25F alone ≤ 1 ms) and ≤ 5 ms at 20,000; ≤ 50 MB installed.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import random
import statistics
import string
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcpmanager.core.catalogue.exposed_names import assign_exposed_names
from mcpmanager.core.search import encoder as encoder_module
from mcpmanager.core.search import vectors as vectors_module
from mcpmanager.core.search.index import SearchDoc, SearchIndex
from mcpmanager.core.search.semantic import ModelName, SemanticIndex, vector_cache
from mcpmanager.core.search.vector_cache import VectorCache

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "bench-data"
SETS = ("livemcpbench", "azure-mcp", "metatool", "bfcl-pooled")
# The README's baseline (b): rank-bm25 over split names, descriptions, parameter names and texts.
BASELINE_B = {
    "livemcpbench": (0.136, 0.255, 0.368, 0.300, 0.406),
    "azure-mcp": (0.773, 0.948, 0.986, 0.885, 0.853),
    "metatool": (0.296, 0.466, 0.544, 0.412, 0.385),
    "bfcl-pooled": (0.330, 0.632, 0.738, 0.537, 0.492),
}
METRICS = ("R@1", "R@5", "R@10", "nDCG@10", "MRR")
DEPTH = 100  # results asked for per query: MRR is computed over these
SIZES = (200, 2_000, 20_000)


@dataclass(frozen=True)
class BenchSet:
    name: str
    tools: list[dict[str, Any]]
    queries: list[dict[str, Any]]


def load(name: str, sample: int | None = None, seed: int = 7) -> BenchSet:
    folder = DATA / name
    tools = json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = [json.loads(line) for line in handle if line.strip()]
    if sample is not None and sample < len(queries):
        queries = random.Random(seed).sample(queries, sample)
    return BenchSet(name, tools, queries)


def docs_of(tools: Sequence[dict[str, Any]]) -> list[SearchDoc]:
    exposed = assign_exposed_names((str(t["server"]), str(t["name"])) for t in tools)
    return [
        SearchDoc.from_tool(str(t["server"]), str(t["name"]), exposed[(str(t["server"]), str(t["name"]))], t)
        for t in tools
    ]


# Quality ------------------------------------------------------------------------------------------


def _scores(ranked: list[str], groups: list[set[str]]) -> tuple[float, ...]:
    """R@1, R@5, R@10, nDCG@10, MRR of one ranking; each group is one needed tool (any member counts)."""

    def found(k: int) -> int:
        top = set(ranked[:k])
        return sum(1 for g in groups if g & top)

    recalls = tuple(found(k) / len(groups) for k in (1, 5, 10))
    seen: set[int] = set()
    dcg = 0.0
    first = 0.0
    for rank, name in enumerate(ranked, 1):
        hit = next((i for i, g in enumerate(groups) if name in g and i not in seen), None)
        if hit is None:
            continue
        seen.add(hit)
        first = first or 1.0 / rank
        if rank <= 10:
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(groups), 10) + 1))
    return (*recalls, dcg / ideal, first)


def half_of(query: str) -> str:
    """The tuning split: "A" (tuned on) or "B" (not), by a hash of the query's text."""
    return "AB"[int(hashlib.md5(query.encode()).hexdigest(), 16) % 2]


def quality(
    bench: BenchSet, index: SearchIndex | None = None, semantic: bool = True, model: ModelName = "static"
) -> dict[str, dict[str, float]]:
    if index is None:
        index = SearchIndex(semantic=SemanticIndex(model=model) if semantic else False)
        index.replace_all(docs_of(bench.tools))
    name_of = {f"{t['server']}:{t['name']}": str(t["name"]) for t in bench.tools}
    strict: list[tuple[float, ...]] = []
    grouped: list[tuple[float, ...]] = []
    halves: dict[str, list[tuple[float, ...]]] = {"A": [], "B": []}
    for query in bench.queries:
        ranked = [name_of[h.key] for h in index.search(query["query"], DEPTH)]
        strict.append(_scores(ranked, [{name} for name in query["relevant"]]))
        halves[half_of(query["query"])].append(strict[-1])
        if "relevant_groups" in query:
            grouped.append(_scores(ranked, [set(g) for g in query["relevant_groups"]]))
    result = {"strict": _mean(strict), "half A": _mean(halves["A"]), "half B": _mean(halves["B"])}
    if grouped:
        result["groups"] = _mean(grouped)
    return result


def _mean(rows: list[tuple[float, ...]]) -> dict[str, float]:
    return {m: sum(r[i] for r in rows) / len(rows) if rows else 0.0 for i, m in enumerate(METRICS)}


# Speed --------------------------------------------------------------------------------------------


def replicated(tools: Sequence[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """`size` tools: the real ones, then copies on renamed servers with renamed tools."""
    out: list[dict[str, Any]] = []
    copy = 0
    while len(out) < size:
        for tool in tools[: size - len(out)]:
            if copy == 0:
                out.append(tool)
            else:
                out.append({**tool, "server": f"{tool['server']}-{copy}", "name": f"{tool['name']}_v{copy}"})
        copy += 1
    return out


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def speed(
    pool: list[dict[str, Any]], queries: list[str], semantic: bool = True, shared: VectorCache | None = None
) -> dict[str, dict[str, float]]:
    """Build time counts the tools' vectors computed from scratch (no cache), for the hybrid; with a
    `shared` cache (the encoder's, filled by `encoder_costs`), read from it."""
    results: dict[str, dict[str, float]] = {}
    for size in SIZES:
        docs = docs_of(replicated(pool, size))
        index = SearchIndex(semantic=semantic)
        if shared is not None:
            index = SearchIndex(semantic=SemanticIndex(cache=shared, model="encoder"))
        start = time.perf_counter()
        index.replace_all(docs)
        build = time.perf_counter() - start
        for query in queries[:20]:  # warm caches (stemmer, numpy)
            index.search(query, 10)
        samples = []
        for query in queries:
            start = time.perf_counter()
            index.search(query, 10)
            samples.append((time.perf_counter() - start) * 1000)
        row = {
            "build_s": build,
            "query_p50_ms": statistics.median(samples),
            "query_p95_ms": _percentile(samples, 0.95),
            "query_max_ms": max(samples),
        }
        row.update(_update_costs(index, docs))
        results[str(size)] = row
    return results


def _update_costs(index: SearchIndex, docs: list[SearchDoc]) -> dict[str, float]:
    """One server's 50 tools replaced (upserts), then the first query (which may compact)."""
    changed = [dataclasses.replace(d, description=f"{d.description} changed") for d in docs[:50]]
    start = time.perf_counter()
    for doc in changed:
        index.upsert(doc)
    upsert = time.perf_counter() - start
    start = time.perf_counter()
    index.search("list files in a directory", 10)
    first = time.perf_counter() - start
    return {"upsert_50_ms": upsert * 1000, "first_query_after_ms": first * 1000}


def vector_costs(pool: list[dict[str, Any]]) -> dict[str, float]:
    """Loading the shipped vectors, their memory, and what they add to the installed package; the
    memory of 20,000 tools' vectors, and building those from the cache (a restart) and from scratch."""
    vectors_module.shipped.cache_clear()
    start = time.perf_counter()
    loaded = vectors_module.shipped()
    load = time.perf_counter() - start
    data = Path(vectors_module.__file__).parent / "data"
    installed = sum(f.stat().st_size for f in data.iterdir() if f.is_file())
    docs = docs_of(replicated(pool, 20_000))
    index = SearchIndex()
    start = time.perf_counter()
    index.replace_all(docs)
    cold = time.perf_counter() - start
    assert index.semantic is not None
    cache = index.semantic.cache
    again = SearchIndex(semantic=type(index.semantic)(cache=cache))
    start = time.perf_counter()
    again.replace_all(docs)
    warm = time.perf_counter() - start
    return {
        "load_s": load,
        "token_vectors_mb": loaded.matrix.nbytes / 1e6,
        "installed_mb": installed / 1e6,
        "tool_vectors_mb_20000": 20_000 * loaded.dims * 4 / 1e6,
        "build_20000_from_scratch_s": cold,
        "build_20000_from_cache_s": warm,
    }


def encoder_costs(pool: list[dict[str, Any]]) -> tuple[dict[str, float], VectorCache]:
    """The encoder's load time and memory, what it adds to the installed package, and the time to
    embed tools from scratch (2,000, then all 20,000, in batches as the engine's vector job does);
    the cache it fills serves `speed` and `blob_query_ms`."""
    encoder_module.shipped.cache_clear()
    start = time.perf_counter()
    loaded = encoder_module.shipped()
    load = time.perf_counter() - start
    weights = Path(encoder_module.__file__).parent / "data" / encoder_module.WEIGHTS
    held = [a for a in vars(loaded).values() if isinstance(a, np.ndarray)]
    held += [a for layer in loaded.layers for a in vars(layer).values() if isinstance(a, np.ndarray)]
    held += [a for layer in loaded.layers for pair in (layer.norm1, layer.norm2) for a in pair]
    cache = vector_cache("encoder")
    docs = docs_of(replicated(pool, 20_000))
    start = time.perf_counter()
    SemanticIndex(cache=cache, model="encoder").prepare(docs[:2_000])
    first = time.perf_counter() - start
    start = time.perf_counter()
    SemanticIndex(cache=cache, model="encoder").prepare(docs)
    rest = time.perf_counter() - start
    return {
        "load_s": load,
        "weights_in_memory_mb": sum(a.nbytes for a in held) / 1e6,
        "installed_added_mb": weights.stat().st_size / 1e6,
        "tool_vectors_mb_20000": 20_000 * loaded.dims * 4 / 1e6,
        "embed_2000_tools_s": first,
        "embed_20000_tools_s": first + rest,
    }, cache


def blob_query_ms(pool: list[dict[str, Any]], shared: VectorCache | None = None) -> float:
    index = SearchIndex()
    if shared is not None:
        index = SearchIndex(semantic=SemanticIndex(cache=shared, model="encoder"))
    index.replace_all(docs_of(replicated(pool, 20_000)))
    blob = "decode this image " + "".join(
        random.Random(1).choices(string.ascii_letters + string.digits + "+/", k=200_000)
    )
    start = time.perf_counter()
    index.search(blob, 10)
    return (time.perf_counter() - start) * 1000


# Report -------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--metatool-sample", type=int, default=2000, help="0 = all 21,041 queries")
    parser.add_argument("--no-speed", action="store_true", help="quality only")
    parser.add_argument("--no-quality", action="store_true", help="speed, vectors and size only")
    parser.add_argument("--encoder", action="store_true", help="the sentence encoder as the semantic side")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"bench_search: no data at {DATA}", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"quality": {}, "speed": {}}
    benches = [load(s, args.metatool_sample or None if s == "metatool" else None) for s in args.sets]
    model: ModelName = "encoder" if args.encoder else "static"
    for bench in [] if args.no_quality else benches:
        report["quality"][bench.name] = quality(bench, model=model)
        lexical = quality(bench, semantic=False)
        report["quality"][bench.name].update(
            {f"bm25f {view}": lexical[view] for view in ("strict", "half A", "half B")}
        )
        report["quality"][bench.name]["queries"] = len(bench.queries)
    if not args.no_speed:
        pool = [t for b in benches for t in b.tools]
        rng = random.Random(3)
        queries = [q["query"] for b in benches for q in rng.sample(b.queries, min(100, len(b.queries)))]
        shared = None
        if args.encoder:
            report["vectors"], shared = encoder_costs(pool)
        else:
            report["vectors"] = vector_costs(pool)
        report["speed"] = speed(pool, queries, shared=shared)
        report["speed_bm25f"] = speed(pool, queries, semantic=False)
        report["speed"]["blob_query_ms_20000"] = blob_query_ms(pool, shared)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        _print(report)
    return 0


def _print(report: dict[str, Any]) -> None:
    print(f"{'set':<14}{'view':<9}" + "".join(f"{m:>9}" for m in METRICS))
    gains = []
    for name, views in report["quality"].items():
        base = BASELINE_B[name]
        print(f"{name:<14}{'base (b)':<9}" + "".join(f"{v:>9.3f}" for v in base))
        for view in ("strict", "groups", "half A", "half B", "bm25f strict", "bm25f half A", "bm25f half B"):
            if view in views:
                print(f"{'':<14}{view:<13}" + "".join(f"{views[view][m]:>9.3f}" for m in METRICS))
        gains.append(views["strict"]["R@5"] - base[1])
        print(f"{'':<14}{'queries':<9}{views['queries']:>9}")
    if gains:
        mean = sum(gains) / len(gains) * 100
        print(f"R@5 gain over (b), strict, mean of {len(gains)} sets: {mean:+.1f} points")
    for name in ("speed", "speed_bm25f"):
        for size, row in report.get(name, {}).items():
            if isinstance(row, dict):
                print(f"{name:<12}{size:>6} tools: " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))
            else:
                print(f"{size}: {row:.1f}")
    for key, value in report.get("vectors", {}).items():
        print(f"vectors {key}: {value:.3f}")


if __name__ == "__main__":
    sys.exit(main())
