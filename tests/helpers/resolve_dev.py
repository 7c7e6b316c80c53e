"""The development set for resolution that generalises (`tests/data/resolve/dev_generalise_*`).

Wrong tool names and argument names written for a catalogue the resolver was not built on (the
Azure MCP server's tools and BFCL's service APIs, see that folder's README_dev.md). Each case says
which half it is in: `tune` (rules were adjusted while looking at it) or `heldout` (only measured).
The halves are reported apart, as `source`, so that a figure on `heldout` stays a fair one.
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.resolve_cases import DATA, ArgumentCase, NameCase, Tool

CATALOGUE = "dev-generalise"
HALVES = ("tune", "heldout")


def _lines(name: str) -> list[dict[str, Any]]:
    path = DATA / "resolve" / f"dev_generalise_{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def dev_cases() -> tuple[dict[str, list[Tool]], list[NameCase], list[ArgumentCase]]:
    tools = json.loads((DATA / "resolve" / "dev_generalise_catalogue.json").read_text(encoding="utf-8"))
    names = [
        NameCase(i["id"], CATALOGUE, i["tool_name"], i["expect"], i["style"], i["half"], tuple(i.get("near") or ()))
        for i in _lines("names")
    ]
    arguments = [
        ArgumentCase(i["id"], CATALOGUE, i["tool"], i["arguments"], i["expect"], i["kind"], i["kind"], i["half"])
        for i in _lines("arguments")
    ]
    return {CATALOGUE: tools}, names, arguments
