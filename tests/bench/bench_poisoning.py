"""Tool-poisoning heuristics on published tool definitions: how many each rule flags (false alarms,
unless a flagged definition really is poisoned) and the rate over every definition scanned.

The tune set is what the rules were tuned on (tests/data/catalogues/published.json and
livemcpbench.json); `--heldout` scans the two held-out catalogues instead (tests/data/heldout*/
catalogue.json, their tool definitions only), which the rules were not tuned on. `--show` prints
every finding. Also printed: the test set (tests/data/poisoning/): poisoned definitions caught,
benign look-alikes flagged, and poisoned definitions written after the rules were frozen and never
tuned on (unseen.jsonl): how many the rules catch.

    .venv/bin/python -m tests.bench.bench_poisoning [--json] [--heldout] [--show]

Target: below 1 % of definitions flagged.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from mcpmanager.core.catalogue.poisoning import Finding, scan

DATA = Path(__file__).resolve().parents[1] / "data"
TUNE = (DATA / "catalogues" / "published.json", DATA / "catalogues" / "livemcpbench.json")
HELDOUT = (DATA / "heldout" / "catalogue.json", DATA / "heldout2" / "catalogue.json")
POISONING = DATA / "poisoning"
TARGET = 0.01


def test_set() -> dict[str, Any]:
    """Caught / total for the poisoned sets, flagged / total for the look-alikes."""

    def cases(name: str) -> list[dict[str, Any]]:
        lines = (POISONING / name).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def caught(name: str) -> list[str]:
        return [c["id"] for c in cases(name) if scan(c["kind"], c["item"])]

    return {
        name.removesuffix(".jsonl"): {"flagged": len(caught(name)), "of": len(cases(name)), "ids": caught(name)}
        for name in ("poisoned.jsonl", "unseen.jsonl", "lookalikes.jsonl")
    }


def measure(paths: tuple[Path, ...]) -> dict[str, Any]:
    """Scan every tool definition of the catalogues: totals, definitions flagged per rule, each finding."""
    scanned = 0
    per_rule: Counter[str] = Counter()
    flagged: list[dict[str, Any]] = []
    for path in paths:
        for tool in json.loads(path.read_text(encoding="utf-8")):
            scanned += 1
            findings: list[Finding] = scan("tool", tool)
            if findings:
                per_rule.update({f.code for f in findings})
                flagged.append(
                    {
                        "catalogue": path.parent.name + "/" + path.name,
                        "tool": f"{tool.get('server')}:{tool.get('name')}",
                        "findings": [f.describe() for f in findings],
                    }
                )
    return {
        "catalogues": [p.parent.name + "/" + p.name for p in paths],
        "scanned": scanned,
        "flagged": len(flagged),
        "rate": len(flagged) / scanned if scanned else 0.0,
        "per_rule": dict(sorted(per_rule.items())),
        "items": flagged,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--heldout", action="store_true", help="scan the held-out catalogues instead")
    parser.add_argument("--show", action="store_true", help="print every finding")
    args = parser.parse_args(argv)
    result = measure(HELDOUT if args.heldout else TUNE)
    result["test_set"] = test_set()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"catalogues: {', '.join(result['catalogues'])}")
    print(f"definitions scanned: {result['scanned']}")
    print(f"flagged: {result['flagged']} ({result['rate']:.2%}; target below {TARGET:.0%})")
    for code, n in result["per_rule"].items():
        print(f"  {code}: {n}")
    for name, row in result["test_set"].items():
        print(f"{name}: {row['flagged']} of {row['of']} flagged")
    if args.show:
        for item in result["items"]:
            print(f"- {item['catalogue']} {item['tool']}")
            for f in item["findings"]:
                print(f"    [{f['code']}] {f['where']}: {f['reason']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
