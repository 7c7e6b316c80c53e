"""Context cost benchmark (figures, not pass/fail): what a client's model reads.

- resting context: the tools/list a client sees in discovery mode with nothing always-on, against
  what direct exposure of the same catalogue would cost;
- discover_tools: tokens of the text result per hit, over each set's queries.

Tokens are estimated as UTF-8 bytes / 4 of the JSON (tools/list) or of the text (results).

    .venv/bin/python -m tests.bench.bench_context [--json] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.modes import Mode
from mcpmanager.core.proxy.router import Router
from mcpmanager.core.proxy.token_count import tokens_of, tools_tokens

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT.parent / "shared" / "bench-data"
PUBLISHED = ROOT / ".cache" / "published" / "catalogue.json"


def router_for(tools: list[dict[str, Any]], mode: Mode) -> Router:
    by_server: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for tool in tools:
        spec = {k: v for k, v in tool.items() if k != "server"}
        spec.setdefault("inputSchema", {"type": "object"})
        by_server[str(tool.get("server") or "tools")].append(spec)
    catalogue = Catalogue()
    catalogue.configure(list(by_server), {})
    for server, specs in by_server.items():
        catalogue.set_tools(server, specs)
    return Router(catalogue, {}, mode)


def listed_tokens(router: Router) -> int:
    return tools_tokens([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in router.tool_list()])


def measure(name: str, tools: list[dict[str, Any]], queries: list[str]) -> dict[str, Any]:
    discovery = router_for(tools, "discovery")
    direct = router_for(tools, "direct")
    per_hit: list[float] = []
    for query in queries:
        result = discovery.discovery.discover({"query": query, "limit": 5})
        hits = len((result.structured_content or {}).get("tools", []))
        if hits:
            text = "".join(getattr(c, "text", "") for c in result.content)
            per_hit.append(tokens_of(text) / hits)
    return {
        "set": name,
        "tools": len(tools),
        "resting_tokens": listed_tokens(discovery),
        "direct_tokens": listed_tokens(direct),
        "tokens_per_hit_median": statistics.median(per_hit) if per_hit else None,
        "tokens_per_hit_max": max(per_hit) if per_hit else None,
    }


def load_sets(limit: int) -> list[tuple[str, list[dict[str, Any]], list[str]]]:
    sets = []
    if PUBLISHED.exists():
        tools = json.loads(PUBLISHED.read_text())
        needs = ["what time is it in Tokyo", "show the unstaged changes in my repository", "read a file"]
        sets.append(("published (12 real servers)", tools, needs))
    for folder in sorted(p for p in SETS.iterdir() if p.is_dir()) if SETS.is_dir() else []:
        tools = json.loads((folder / "catalogue.json").read_text())
        with (folder / "queries.jsonl").open() as handle:
            queries = [json.loads(line)["query"] for _, line in zip(range(limit), handle, strict=False)]
        sets.append((folder.name, tools, queries))
    return sets


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rows = [measure(name, tools, queries) for name, tools, queries in load_sets(args.queries)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'catalogue':<28} {'tools':>6} {'resting':>8} {'direct':>9} {'tok/hit median':>15} {'max':>5}")
    for row in rows:
        median = row["tokens_per_hit_median"]
        biggest = row["tokens_per_hit_max"]
        print(
            f"{row['set']:<28} {row['tools']:>6} {row['resting_tokens']:>8} {row['direct_tokens']:>9} "
            f"{median if median is None else round(median):>15} {biggest if biggest is None else round(biggest):>5}"
        )


if __name__ == "__main__":
    main()
