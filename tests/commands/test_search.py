"""`mcpmanager search`: the command-line contract (JSON lines in order, limits, exit 2 with one line)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest
from pytest import CaptureFixture

from mcpmanager.commands import search

TOOLS = [
    {
        "server": "gh",
        "name": "create_issue",
        "description": "Create a new issue in a repository.",
        "inputSchema": {},
    },
    {"server": "gh", "name": "list_pull_requests", "description": "List pull requests.", "inputSchema": {}},
    {"server": "fs", "name": "read_file", "description": "Read a file from disk.", "inputSchema": {}},
    {"server": "fs2", "name": "read_file", "description": "Read a text file.", "inputSchema": {}},
    {"server": "fs", "name": "write_file", "description": "Write a file to disk.", "inputSchema": {}},
    {"server": "x", "name": "deploy_app", "description": "Deploy the application.", "inputSchema": {}},
]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MCPMANAGER_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def catalogue(tmp_path: Path) -> Path:
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(TOOLS))
    return path


def main(*argv: str | Path) -> int:
    parser = argparse.ArgumentParser(prog="mcpmanager")
    search.add_parser(parser.add_subparsers(dest="command"))
    return search.run(parser.parse_args([str(a) for a in ("search", *argv)]))


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_queries_file_gives_one_line_per_query_in_order(
    tmp_path: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "q.jsonl"
    lines = [
        {"id": "b", "query": "read a file", "relevant": ["read_file"]},
        {"id": 7, "query": "zxqv wplk"},
        {"query": "open an issue"},
        {"id": "a", "query": "write to a file"},
    ]
    queries.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    assert main("--catalogue", catalogue, "--queries", queries, "--limit", "2") == 0
    out = json_lines(capsys.readouterr().out)
    assert [o["id"] for o in out] == ["b", 7, None, "a"]
    assert all(len(o["results"]) <= 2 for o in out)
    first = out[0]["results"]
    assert {r["name"] for r in first} == {"fs__read_file", "fs2__read_file"}  # clashing names are exposed
    assert set(first[0]) == {"server", "tool", "name", "score", "approval"} and first[0]["tool"] == "read_file"
    assert out[1]["results"] == []
    assert out[2]["results"][0] == {
        "server": "gh",
        "tool": "create_issue",
        "name": "create_issue",
        "score": out[2]["results"][0]["score"],
        "approval": "allow",
    }
    assert out[3]["results"][0]["tool"] == "write_file"


def test_results_say_which_calls_serving_would_ask_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = [
        {"server": "s", "name": "delete_item", "description": "Delete an item."},  # destructive by its name
        {"server": "s", "name": "get_item", "description": "Read an item.", "annotations": {"readOnlyHint": True}},
        {"server": "s", "name": "purge_items", "description": "Purge the items."},
    ]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(tools))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {}, "tools": {"s:purge_items": {"approval": "deny"}}}))
    assert main("--config", config, "--catalogue", path, "--json", "item") == 0
    found = {r["tool"]: r["approval"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert found == {"delete_item": "ask", "get_item": "allow", "purge_items": "deny"}


def test_default_limit_is_ten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = [{"server": "s", "name": f"file_tool_{i}", "description": "A file tool."} for i in range(15)]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many))
    assert main("--catalogue", path, "--json", "file") == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 10


def test_a_single_query_prints_a_list_or_json(catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main("--catalogue", catalogue, "open a new issue") == 0
    out = capsys.readouterr().out
    assert out.startswith(" 1. create_issue") and "[gh]" in out and "Create a new issue" in out
    assert main("--catalogue", catalogue, "--json", "open a new issue") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["id"] is None and document["results"][0]["tool"] == "create_issue"
    assert main("--catalogue", catalogue, "zxqv wplk") == 0
    assert "No tool matches" in capsys.readouterr().out


def test_config_synonyms_are_used(tmp_path: Path, catalogue: Path, capsys: CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"synonyms": {"ship": ["deploy"]}}))
    assert main("--catalogue", catalogue, "--json", "ship it") == 0
    assert json.loads(capsys.readouterr().out)["results"] == []
    assert main("--config", config, "--catalogue", catalogue, "--json", "ship it") == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["tool"] == "deploy_app"


def test_without_catalogue_the_cached_tools_of_enabled_servers_are_searched(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir(parents=True)
    (home / "config.json").write_text(
        json.dumps(
            {
                "mcpServers": {"gh": {"command": "x"}, "off": {"command": "y", "disabled": True}},
                "tools": {"gh:list_pull_requests": {"disabled": True}},
            }
        )
    )
    (home / "cache").mkdir()
    servers = {
        "gh": {"tools": [t for t in TOOLS if t["server"] == "gh"]},
        "off": {"tools": [{"name": "create_ticket", "description": "Create a new issue ticket."}]},
    }
    (home / "cache" / "catalogue.json").write_text(json.dumps({"version": 1, "servers": servers}))
    assert main("--json", "new issue or pull request") == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["tool"] for r in results] == ["create_issue"]  # disabled server and tool left out


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["--catalogue", "{tmp}/missing.json", "x"], "cannot read the catalogue {tmp}/missing.json"),
        ("[{", ["--catalogue", "{file}", "x"], "{file}:1:3: invalid JSON"),
        ('{"a": 1}', ["--catalogue", "{file}", "x"], "{file}: expected a JSON list of tools"),
        (
            '[{"server": "s"}]',
            ["--catalogue", "{file}", "x"],
            "{file}: tool #0: 'name' must be a non-empty string",
        ),
        (
            '[{"server": "s", "name": "t"}, {"server": "s", "name": "t"}]',
            ["--catalogue", "{file}", "x"],
            "{file}: tool #1: tool 't' of server 's' is listed twice",
        ),
        ("[]", ["--catalogue", "{file}"], "give either a QUERY or --queries FILE"),
        (
            "[]",
            ["--catalogue", "{file}", "--queries", "{file}", "x"],
            "give either a QUERY or --queries FILE",
        ),
        ("[]", ["--catalogue", "{file}", "--limit", "0", "x"], "--limit must be at least 1"),
        ("[]", ["--catalogue", "{file}", "--limit", "ten", "x"], "--limit must be a whole number, got 'ten'"),
        ("[]", ["--config", "{tmp}/nope.json", "x"], "config file not found"),
        (None, ["x"], "no cached tools"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str | None, args: list[str], message: str
) -> None:
    file = tmp_path / "input.json"
    if setup is not None:
        file.write_text(setup)
    fill = {"tmp": str(tmp_path), "file": str(file)}
    assert main(*[a.format(**fill) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("mcpmanager: ")
    assert message.format(**fill) in captured.err


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"id": 1, "query": "a"}\n{"id": 2, "query": }\n', ":2: invalid JSON"),
        ('{"id": 1, "query": "a"}\n\n["query"]\n', ":3: expected a JSON object"),
        ('{"id": 1, "q": "a"}\n', ":1: 'query' must be a string"),
    ],
)
def test_a_bad_query_line_is_named_and_nothing_is_written(
    tmp_path: Path, catalogue: Path, capsys: pytest.CaptureFixture[str], lines: str, message: str
) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(lines)
    assert main("--catalogue", catalogue, "--queries", queries) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"mcpmanager: {queries}{message}") and captured.err.count("\n") == 1


def test_queries_from_stdin(
    catalogue: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"id": "s", "query": "read a file"}\n'))
    assert main("--catalogue", catalogue, "--queries", "-") == 0
    assert json_lines(capsys.readouterr().out)[0]["id"] == "s"
