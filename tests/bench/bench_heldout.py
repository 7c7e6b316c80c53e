"""The frozen held-out sets (tests/data/heldout and heldout2, TEST-ONLY): search, names and
arguments on servers nobody here tuned on. Figures, not pass/fail.

    .venv/bin/python -m tests.bench.bench_heldout [--set heldout|heldout2] [--json] [--encoder]

It prints totals only, per style at most: no case, no miss and no failure is ever listed, so that
reading the output cannot turn into tuning on it. Run it before a change to discovery, and once
at its end; never in between.

Search: hit@k is the share of queries with at least one relevant tool in the first k results (the
issue's measure); R@5 as the search benchmark computes it (each relevant tool, or each group of
alternatives, is one needed tool); all@5, the share of queries with every needed tool in the first 5
(a compound query's parts each found).
Names and arguments: scored exactly as `bench_resolve` scores the tuned sets (`resolve_eval`).
`--encoder`: search with the opt-in sentence encoder (`proxy.semanticModel: "encoder"`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from mcpmanager.core.catalogue.exposed_names import assign_exposed_names
from mcpmanager.core.search.index import SearchDoc, SearchIndex
from mcpmanager.core.search.semantic import ModelName, SemanticIndex
from tests.helpers.resolve_cases import ArgumentCase, NameCase, Tool
from tests.helpers.resolve_eval import evaluate

DATA = Path(__file__).resolve().parents[1] / "data"
SETS = ("heldout", "heldout2")
CATALOGUE = "heldout"  # the catalogue's name in the cases, whichever set they are
DEPTH = 10


def _lines(folder: Path, name: str) -> list[dict[str, Any]]:
    text = (folder / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load(held: str = "heldout") -> tuple[list[Tool], list[dict[str, Any]], list[NameCase], list[ArgumentCase]]:
    folder = DATA / held
    tools: list[Tool] = json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
    names = [
        NameCase(c["id"], CATALOGUE, c["tool_name"], c["expect"], c["style"], held, tuple(c.get("near") or ()))
        for c in _lines(folder, "names.jsonl")
    ]
    arguments = [
        ArgumentCase(
            c["id"], CATALOGUE, c["tool"], c["arguments"], c["expect"], c["kind"], c.get("style") or c["kind"],
            held, c.get("params") or {},
        )
        for c in _lines(folder, "arguments.jsonl")
    ]  # fmt: skip
    return tools, _lines(folder, "queries.jsonl"), names, arguments


def search_figures(tools: list[Tool], queries: list[dict[str, Any]], model: ModelName = "static") -> dict[str, Any]:
    exposed = assign_exposed_names((str(t["server"]), str(t["name"])) for t in tools)
    index = SearchIndex(semantic=SemanticIndex(model=model))
    index.replace_all(
        [
            SearchDoc.from_tool(str(t["server"]), str(t["name"]), exposed[(str(t["server"]), str(t["name"]))], t)
            for t in tools
        ]
    )
    hits = {1: 0, 5: 0}
    recall5 = 0.0
    every5 = 0
    by_style: Counter[str] = Counter()
    by_style_hit5: Counter[str] = Counter()
    for query in queries:
        ranked = [h.key for h in index.search(query["query"], DEPTH)]
        groups = [set(g) for g in query.get("relevant_groups") or [[key] for key in query["relevant"]]]
        relevant = set(query["relevant"]) | {key for g in groups for key in g}
        for k in hits:
            hits[k] += bool(relevant & set(ranked[:k]))
        found5 = sum(1 for g in groups if g & set(ranked[:5]))
        recall5 += found5 / len(groups)
        every5 += found5 == len(groups)
        style = str(query.get("style", "—"))
        by_style[style] += 1
        by_style_hit5[style] += bool(relevant & set(ranked[:5]))
    count = len(queries)
    return {
        "queries": count,
        "hit@1": hits[1] / count,
        "hit@5": hits[5] / count,
        "R@5": recall5 / count,
        "all@5": every5 / count,
        "hit@5 by style": {s: round(by_style_hit5[s] / n, 3) for s, n in sorted(by_style.items())},
    }


def resolve_figures(tools: list[Tool], names: list[NameCase], arguments: list[ArgumentCase]) -> dict[str, Any]:
    report = evaluate({CATALOGUE: tools}, names, arguments)
    total = report.name_total()
    args = report.argument_total()
    styles = sorted({case.style for case in names if case.expect is not None})
    return {
        "names": {
            "resolvable": total.resolvable,
            "auto-resolved correctly": total.correct / total.resolvable,
            "recovered (auto or top 3)": total.recovered / total.resolvable,
            "wrong auto on resolvable": total.wrong,
            "must-not": total.must_not,
            "wrong auto on must-not": total.must_not_wrong,
            "correct by style": {
                s: round(t.correct / t.resolvable, 3) for s in styles if (t := report.name_total(style=s)).resolvable
            },
        },
        "arguments": {
            "fixable": args.fixable,
            "repaired": args.repaired / args.fixable if args.fixable else None,
            "valid kept": f"{args.kept}/{args.valid}",
            "must-refuse refused": f"{args.refused}/{args.must_refuse}",
            "unsafe forwards": args.unsafe,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--encoder", action="store_true", help="search with the opt-in sentence encoder")
    parser.add_argument("--set", choices=SETS, default="heldout", help="which frozen set")
    args = parser.parse_args(argv)
    tools, queries, names, arguments = load(args.set)
    model: ModelName = "encoder" if args.encoder else "static"
    figures = {"search": search_figures(tools, queries, model), **resolve_figures(tools, names, arguments)}
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for section, values in figures.items():
            print(f"## {section}")
            for key, value in values.items():
                shown = f"{value:.3f}" if isinstance(value, float) else value
                print(f"  {key}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
