"""The second frozen held-out set (tests/data/heldout2/, TEST-ONLY: see its README) is well formed: every
line parses with the fields the benchmarks read, every tool it names is in its catalogue, queries come in
the five styles with enough name-shaped and compound ones, no resolvable wrong name is a real tool name,
repaired arguments are declared parameters with the values passed, and the files are byte for byte the
ones that were frozen. Data checks only: no resolver or search runs here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

# The labels and the checks' helpers are the first set's: one set of rules for both.
from tests.core.test_heldout_data import KINDS, MUST_NOT, RESOLVABLE, _is_destructive_by_name, _type_agrees

HELDOUT = Path(__file__).resolve().parents[1] / "data" / "heldout2"
# SHA-256 of the frozen files. A change here means the set was edited after it was frozen: don't.
FROZEN = {
    "catalogue.json": "befcdd55e685bfe712fa3e21064f9e7e30b48f3eaab0865ed576f69078145395",
    "queries.jsonl": "1d63188a339b64c39a8593a2cfbc9b4ede298dff038097f9dfcb13fd26e310fd",
    "names.jsonl": "724a4b7177a6d255fc65a3ed7e9a6ce00abc650f451fe8003444ee055d86e098",
    "arguments.jsonl": "9e12ebcc4de56684f2f32b22cfb2158a7c87cec958b1ca0f32d5ab3dd97c7638",
}
QUERY_STYLES = {"paraphrase", "lexical", "domain", "name", "compound"}
NAME_SHAPED = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")  # what a model guessing a tool name sends
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _lines(name: str) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate((HELDOUT / name).read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{name}:{n}: empty line"
        row = json.loads(line)
        assert isinstance(row, dict), f"{name}:{n}: not an object"
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def catalogue() -> dict[str, dict[str, Any]]:
    tools = json.loads((HELDOUT / "catalogue.json").read_text(encoding="utf-8"))
    assert isinstance(tools, list)
    keyed: dict[str, dict[str, Any]] = {}
    for tool in tools:
        assert (
            {"server", "name", "description", "inputSchema"}
            <= tool.keys()
            <= {
                "server",
                "name",
                "description",
                "inputSchema",
                "annotations",
            }
        )
        key = f"{tool['server']}:{tool['name']}"
        assert key not in keyed, f"duplicate tool {key}"
        assert tool["inputSchema"].get("type") == "object", key
        keyed[key] = tool
    return keyed


def test_the_files_are_the_frozen_ones() -> None:
    digests = {name: hashlib.sha256((HELDOUT / name).read_bytes()).hexdigest() for name in FROZEN}
    assert digests == FROZEN


def test_the_readme_marks_the_set_test_only_and_names_every_server(catalogue: dict[str, dict[str, Any]]) -> None:
    readme = (HELDOUT / "README.md").read_text(encoding="utf-8")
    assert "TEST-ONLY" in readme and "do not tune on it" in readme
    servers = Counter(tool["server"] for tool in catalogue.values())
    assert len(servers) >= 12
    for server, count in servers.items():
        assert f"| {server} |" in readme, server
        assert any(line.startswith(f"| {server} |") and f"| {count} |" in line for line in readme.splitlines()), (
            f"{server}: tool count {count} not in the README table"
        )


def test_queries_name_catalogue_tools(catalogue: dict[str, dict[str, Any]]) -> None:
    rows = _lines("queries.jsonl")
    assert len(rows) >= 150
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["query"].lower() for row in rows}) == len(rows), "duplicate query"
    for row in rows:
        assert row["catalogue"] == "heldout2", row["id"]
        assert isinstance(row["query"], str) and row["query"].strip(), row["id"]
        relevant = row["relevant"]
        assert isinstance(relevant, list) and relevant, row["id"]
        assert len(set(relevant)) == len(relevant), row["id"]
        assert all(key in catalogue for key in relevant), (row["id"], relevant)
        if "relevant_groups" in row:
            groups = row["relevant_groups"]
            assert all(isinstance(g, list) and g for g in groups), row["id"]
            assert sorted(k for g in groups for k in g) == sorted(relevant), row["id"]
        assert row["style"] in QUERY_STYLES, row["id"]
        if row["style"] == "name":
            assert NAME_SHAPED.fullmatch(row["query"]), (row["id"], row["query"])
        if row["style"] == "compound":  # one group per need, at least two needs
            assert len(row.get("relevant_groups") or []) >= 2, row["id"]
    styles = Counter(row["style"] for row in rows)
    assert styles["name"] >= 25 and styles["compound"] >= 25, styles


def test_wrong_names_are_labelled_against_the_catalogue(catalogue: dict[str, dict[str, Any]]) -> None:
    rows = _lines("names.jsonl")
    real_names = {tool["name"] for tool in catalogue.values()}
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["tool_name"] for row in rows}) == len(rows), "one wrong name, one label"
    styles = Counter(row["style"] for row in rows)
    assert len(rows) >= 150
    assert sum(styles[s] for s in RESOLVABLE) >= 90
    assert sum(styles[s] for s in MUST_NOT) >= 60
    for row in rows:
        assert row["catalogue"] == "heldout2", row["id"]
        assert isinstance(row["tool_name"], str) and row["tool_name"], row["id"]
        assert isinstance(row.get("note"), str), row["id"]
        assert row["style"] in RESOLVABLE | MUST_NOT, row["id"]
        for key in row.get("near") or []:
            assert key in catalogue, (row["id"], key)
        if row["style"] in RESOLVABLE:
            assert row["expect"] in catalogue, (row["id"], row["expect"])
            assert row["tool_name"] not in real_names, f"{row['id']}: {row['tool_name']} is a real tool name"
            assert row["tool_name"] not in catalogue, row["id"]
            assert "near" not in row, row["id"]
        else:
            assert row["expect"] is None, row["id"]


def test_fuzzy_names_never_resolve_onto_a_destructive_tool(catalogue: dict[str, dict[str, Any]]) -> None:
    spelling_only = {"case", "server-prefix"}  # a pure spelling of the exact name may reach any tool
    for row in _lines("names.jsonl"):
        if row["style"] not in RESOLVABLE or row["style"] in spelling_only:
            continue
        tool = catalogue[row["expect"]]
        hints = tool.get("annotations") or {}
        # Annotated, not read-only, and no destructiveHint: could be read either way, so never a target.
        assert not hints or "destructiveHint" in hints or hints.get("readOnlyHint") is True, row["id"]
        if "destructiveHint" in hints:
            destructive = hints["destructiveHint"] is True
        else:
            destructive = _is_destructive_by_name(tool["name"])
        assert not destructive, f"{row['id']}: {row['tool_name']} -> {row['expect']} is destructive"


def test_argument_cases_use_declared_parameters(catalogue: dict[str, dict[str, Any]]) -> None:
    rows = _lines("arguments.jsonl")
    assert len(rows) >= 80
    assert len({row["id"] for row in rows}) == len(rows)
    kinds = Counter(row["kind"] for row in rows)
    assert kinds["valid"] >= 10 and kinds["fixable"] >= 40 and kinds["must-refuse"] >= 20
    for row in rows:
        case = row["id"]
        assert row["catalogue"] == "heldout2", case
        assert row["kind"] in KINDS, case
        assert row["tool"] in catalogue, (case, row["tool"])
        assert isinstance(row["arguments"], dict) and row["arguments"], case
        schema = catalogue[row["tool"]]["inputSchema"]
        declared = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        for alias, target in (row.get("params") or {}).items():
            assert target in declared and alias not in declared, case
        expect = row["expect"]
        if row["kind"] == "must-refuse":
            assert expect is None, case
            continue
        assert isinstance(expect, dict), case
        assert set(expect) <= set(declared), (case, set(expect) - set(declared))
        assert required <= set(expect), (case, required - set(expect))
        for name, value in expect.items():
            assert _type_agrees(value, declared[name]), (case, name)
        if row["kind"] == "valid":
            assert expect == row["arguments"], case
        else:
            assert expect != row["arguments"], case
            assert len(expect) == len(row["arguments"]), f"{case}: an argument was dropped or added"
            values = sorted(json.dumps(v, sort_keys=True) for v in row["arguments"].values())
            assert sorted(json.dumps(v, sort_keys=True) for v in expect.values()) == values, f"{case}: values changed"
            kept = {k: v for k, v in row["arguments"].items() if k in declared}
            assert all(k in expect and expect[k] == v for k, v in kept.items()), f"{case}: a declared argument moved"
