"""The cross-parameter simulation: what the argument repair guesses about names a tool never declared.

For every tool of a real catalogue, each parameter name that another tool of the same server
declares and this one does not is passed to it, with a value of that other parameter's own type,
in two calls: the name alone, and the name beside the tool's required parameters filled in (a call
that is valid without it). Every rename the resolver makes then is a guess: the passed name belongs
to another tool, and whether it means the parameter it was renamed onto is what a rename must be
sure of. The renames are listed per tier (`described` apart from the name tiers), with whether the
call would then be forwarded. (The `typed` tier never renames a name another tool of the server
declares, so this simulation cannot exercise it: it is measured on the development sets only.)

Nothing here is a label: the list is for reading, and the counts are compared before and after a
rule changes. (`bench_resolve --simulate`.)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpmanager.core.resolve.arguments import ArgumentChecker
from tests.helpers.resolve_cases import DATA, Tool, load_catalogue
from tests.helpers.resolve_dev import CATALOGUE as DEV

SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench-data"
# The catalogues of `shared/bench-data` whose tools are grouped by server and declare parameters
# (metatool declares none; azure-mcp and livemcpbench are here already).
SHARED_SETS = ("bfcl-pooled",)


def simulation_catalogues(shared: bool = True) -> dict[str, list[Tool]]:
    catalogues = {name: load_catalogue(name) for name in ("published", "livemcpbench")}
    catalogues[DEV] = json.loads((DATA / "resolve" / "dev_generalise_catalogue.json").read_text(encoding="utf-8"))
    for name in SHARED_SETS if shared else ():
        path = SHARED / name / "catalogue.json"
        if path.exists():
            catalogues[name] = json.loads(path.read_text(encoding="utf-8"))
    return {name: tools for name, tools in catalogues.items() if tools}


def sample_value(prop: Any) -> Any:
    """A value a model would pass for a parameter so declared: of its type, enum or format."""
    if not isinstance(prop, dict):
        return "value"
    for key in ("enum", "examples"):
        if isinstance(prop.get(key), list) and prop[key]:
            return prop[key][0]
    if "const" in prop:
        return prop["const"]
    if "default" in prop and prop["default"] is not None:
        return prop["default"]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and isinstance(prop.get("anyOf"), list) and prop["anyOf"]:
        return sample_value(prop["anyOf"][0])
    if kind == "integer":
        return 3
    if kind == "number":
        return 2.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample_value(prop.get("items"))]
    if kind == "object":
        return {}
    formats = {
        "date": "2025-05-01",
        "date-time": "2025-05-01T10:00:00Z",
        "uri": "https://example.com/a",
        "email": "a@b.co",
    }
    return formats.get(str(prop.get("format")), "sample text")


def _properties(tool: Tool) -> dict[str, Any]:
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _required(tool: Tool) -> list[str]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return [r for r in required or [] if isinstance(r, str) and r in _properties(tool)]


@dataclass(frozen=True)
class SimulatedRename:
    catalogue: str
    server: str
    tool: str
    passed: str  # the other tool's parameter
    source: str  # the tool that declares it
    declared: str  # what it was renamed onto
    how: str
    call: str  # alone | beside-required
    forwarded: bool
    required: bool  # whether the target is required
    passed_description: str
    declared_description: str

    def key(self) -> str:
        return f"{self.catalogue}/{self.server}:{self.tool} {self.passed}->{self.declared}"


def simulate(catalogues: Mapping[str, list[Tool]]) -> list[SimulatedRename]:
    found: list[SimulatedRename] = []
    for catalogue, tools in catalogues.items():
        by_server: dict[str, list[Tool]] = defaultdict(list)
        for tool in tools:
            by_server[str(tool.get("server"))].append(tool)
        for server, group in by_server.items():
            found.extend(_server_renames(catalogue, server, group))
    return found


def _server_renames(catalogue: str, server: str, group: list[Tool]) -> Iterable[SimulatedRename]:
    checker = ArgumentChecker()
    for tool in group:
        own = _properties(tool)
        if not own:
            continue
        filled = {name: sample_value(own[name]) for name in _required(tool)}
        # As the resolver does: the names the server's other tools declare (see typed_match).
        elsewhere = frozenset(n for o in group if o is not tool for n in _properties(o)) - set(own)
        seen: set[str] = set()
        for other in group:
            if other is tool:
                continue
            for passed, prop in _properties(other).items():
                if passed in own or passed in seen:
                    continue
                seen.add(passed)
                value = sample_value(prop)
                for call, arguments in (("alone", {passed: value}), ("beside-required", {**filled, passed: value})):
                    if call == "beside-required" and not filled:
                        continue
                    key = f"{server}:{tool['name']}"
                    checked = checker.check(key, tool["name"], tool, arguments, elsewhere=elsewhere)
                    for rename in checked.renames:
                        if rename.passed != passed:
                            continue
                        target = own.get(rename.declared)
                        yield SimulatedRename(
                            catalogue,
                            server,
                            tool["name"],
                            passed,
                            other["name"],
                            rename.declared,
                            rename.how,
                            call,
                            not checked.refused,
                            rename.declared in _required(tool),
                            _description(prop),
                            _description(target),
                        )


def _description(prop: Any) -> str:
    text = prop.get("description") if isinstance(prop, dict) else None
    return " ".join(text.split())[:140] if isinstance(text, str) else ""


def counts(renames: list[SimulatedRename]) -> dict[str, Any]:
    """Renames per tier and per call, and how many of them would be forwarded."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rename in renames:
        tier = "described" if rename.how == "described" else "name tiers"
        for row in (tier, f"{tier}/{rename.catalogue}"):
            table[row][rename.call] += 1
            table[row][f"{rename.call} forwarded"] += rename.forwarded
    return {row: dict(sorted(cells.items())) for row, cells in sorted(table.items())}


LABELS = DATA / "resolve" / "simulation_labels.json"


def doubtful_labels() -> frozenset[str]:
    return frozenset(json.loads(LABELS.read_text(encoding="utf-8"))["doubtful"])


def judged(rename: SimulatedRename, doubtful: frozenset[str]) -> bool:
    """Whether the labels call a rename doubtful: by its tool and pair of names, else by the pair
    (unless the pair is labelled for other tools only)."""
    pair = f"{rename.passed}->{rename.declared}"
    if f"{rename.tool}:{pair}" in doubtful:
        return True
    return pair in doubtful and not any(label.endswith(f":{pair}") for label in doubtful)


def described_summary(renames: list[SimulatedRename]) -> dict[str, int]:
    """The `described` renames: in all, forwarded, distinct (tool, passed, declared), and of those
    the ones the labels call doubtful or do not know."""
    doubtful = doubtful_labels()
    mine = [r for r in renames if r.how == "described"]
    distinct = {(r.catalogue, r.server, r.tool, r.passed, r.declared): r for r in mine}
    return {
        "renames": len(mine),
        "forwarded": sum(r.forwarded for r in mine),
        "distinct": len(distinct),
        "doubtful": sum(judged(r, doubtful) for r in distinct.values()),
        "doubtful forwarded": sum(judged(r, doubtful) for r in mine if r.forwarded),
    }
