"""The development sets for resolution that generalises.

Wrong tool names and argument names written by hands that did not read the resolver:
`dev_generalise_*` for a catalogue the resolver was not built on (the Azure MCP server's tools and
BFCL's service APIs, README_dev.md), and `dev2_*` for the livemcpbench catalogue (README_dev2.md).
Each case says which half it is in: `tune` (rules were adjusted while looking at it) or `heldout`
(only measured). A case's `source` is its set and half (`dev2/heldout`), so that a figure on a
held-out half stays a fair one.
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.resolve_cases import DATA, ArgumentCase, NameCase, Tool, load_catalogue

CATALOGUE = "dev-generalise"
HALVES = ("tune", "heldout")
SETS = ("dev_generalise", "dev2")  # file prefixes; dev2's cases name their catalogue (livemcpbench)
SOURCES = tuple(f"{name}/{half}" for name in SETS for half in HALVES)


def _lines(name: str) -> list[dict[str, Any]]:
    path = DATA / "resolve" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def dev_cases() -> tuple[dict[str, list[Tool]], list[NameCase], list[ArgumentCase]]:
    catalogues = {
        CATALOGUE: json.loads((DATA / "resolve" / "dev_generalise_catalogue.json").read_text(encoding="utf-8")),
        "livemcpbench": load_catalogue("livemcpbench"),
    }
    names: list[NameCase] = []
    arguments: list[ArgumentCase] = []
    for prefix in SETS:
        for i in _lines(f"{prefix}_names"):
            source = f"{prefix}/{i['half']}"
            catalogue = i.get("catalogue", CATALOGUE)
            near = tuple(i.get("near") or ())
            names.append(NameCase(i["id"], catalogue, i["tool_name"], i["expect"], i["style"], source, near))
        for i in _lines(f"{prefix}_arguments"):
            source = f"{prefix}/{i['half']}"
            catalogue = i.get("catalogue", CATALOGUE)
            params = i.get("params") or {}
            arguments.append(
                ArgumentCase(
                    i["id"], catalogue, i["tool"], i["arguments"], i["expect"], i["kind"], i["kind"], source, params
                )
            )
    return catalogues, names, arguments
