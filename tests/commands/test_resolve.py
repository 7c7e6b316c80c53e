"""`mcpmanager resolve`: the command-line contract (docs/architecture.md, Command line): JSON lines in
order, what would be forwarded or the error a model would read, the config's aliases, exit 2 with one
line on bad input."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.commands import resolve

STRING = {"type": "string"}
TOOLS = [
    {
        "server": "github",
        "name": "create_issue",
        "description": "Create a new issue in a repository.",
        "inputSchema": {
            "type": "object",
            "properties": {"owner": STRING, "repo": STRING, "title": STRING, "append_body": STRING},
            "required": ["owner", "repo", "title"],
        },
    },
    {"server": "fs", "name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object"}},
    {"server": "fs2", "name": "read_file", "description": "Read a text file.", "inputSchema": {"type": "object"}},
    {
        "server": "fs",
        "name": "delete_file",
        "description": "Delete a file.",
        "inputSchema": {"type": "object", "properties": {"path": STRING}, "required": ["path"]},
    },
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
    resolve.add_parser(parser.add_subparsers(dest="command"))
    return resolve.run(parser.parse_args([str(a) for a in ("resolve", *argv)]))


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_calls_file_gives_one_line_per_call_in_order(
    tmp_path: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = tmp_path / "calls.jsonl"
    entries = [
        {"id": "a", "tool_name": "GitHub.createIssue", "arguments": {"owner": "o", "repository": "r", "title": "t"}},
        {"id": 2, "tool_name": "read_file"},
        {"tool_name": "delete_fil", "arguments": {"path": "/x"}},
        {"id": "d", "tool_name": "create_issue", "arguments": {"owner": "o", "repo": "r", "title": "t", "append": 1}},
        {"id": "e", "tool_name": "github:create_issue"},
    ]
    calls.write_text("\n".join(json.dumps(e) for e in entries) + "\n\n")
    assert main("--catalogue", catalogue, "--calls", calls) == 0
    out = lines(capsys.readouterr().out)
    assert [o["id"] for o in out] == ["a", 2, None, "d", "e"]
    first = out[0]
    assert first["resolved"] == {"server": "github", "tool": "create_issue", "name": "create_issue"}
    assert first["how"] == "normalized" and first["renamed"] == {"repository": "repo"}
    assert first["arguments"] == {"owner": "o", "repo": "r", "title": "t"} and first["error"] is None
    ambiguous = out[1]
    assert ambiguous["resolved"] is None and ambiguous["arguments"] is None
    assert ambiguous["suggestions"][:2] == ["fs__read_file", "fs2__read_file"]
    assert ambiguous["error"].startswith("Ambiguous tool name 'read_file'")
    destructive = out[2]
    assert destructive["resolved"] is None and destructive["suggestions"][0] == "delete_file"
    assert "can destroy data" in destructive["error"]
    refused = out[3]
    assert refused["resolved"]["tool"] == "create_issue" and refused["how"] == "exact"
    assert refused["arguments"] is None and "'append' is not a parameter" in refused["error"]
    assert out[4]["how"] == "namespaced" and out[4]["arguments"] is None and out[4]["error"] is None


def test_one_tool_as_text_and_as_json(catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = json.dumps({"owner": "o", "repository": "r", "title": "t"})
    assert main("--catalogue", catalogue, "--tool", "create_isue", "--arguments", arguments) == 0
    assert capsys.readouterr().out.splitlines() == [
        "create_isue → create_issue [github] (fuzzy)",
        "argument repository → repo (synonym)",
        'would send {"owner": "o", "repo": "r", "title": "t"}',
    ]
    assert main("--catalogue", catalogue, "--tool", "send_mail", "--json") == 1  # serving would refuse it
    [out] = lines(capsys.readouterr().out)
    assert out["resolved"] is None and out["error"].startswith("Unknown tool 'send_mail'.")


def test_aliases_and_parameter_aliases_come_from_the_config(
    tmp_path: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    settings = {"aliases": ["open_ticket"], "params": {"project": "repo"}}
    config.write_text(json.dumps({"mcpServers": {}, "tools": {"github:create_issue": settings}}))
    arguments = json.dumps({"owner": "o", "project": "r", "title": "t"})
    assert main("--config", config, "--catalogue", catalogue, "--tool", "open_ticket", "--arguments", arguments) == 0
    assert capsys.readouterr().out.splitlines() == [
        "open_ticket → create_issue [github] (alias)",
        "argument project → repo (alias)",
        'would send {"owner": "o", "repo": "r", "title": "t"}',
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "give either --tool NAME or --calls FILE, not both or neither"),
        (("--tool", "x", "--calls", "c.jsonl"), "give either --tool NAME or --calls FILE"),
        (("--arguments", "{}", "--calls", "c.jsonl"), "--arguments goes with --tool"),
        (("--tool", "x", "--arguments", "[1]"), "--arguments must be a JSON object"),
        (("--tool", "x", "--arguments", "{oops"), "--arguments: invalid JSON"),
    ],
)
def test_bad_usage_is_exit_2_with_one_line(
    catalogue: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    assert main("--catalogue", catalogue, *argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"mcpmanager: {message}") and captured.err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"tool_name": "a"}\nnot json\n', "calls.jsonl:2: invalid JSON"),
        ('{"tool_name": ""}\n', "calls.jsonl:1: 'tool_name' must be a non-empty string"),
        ('{"tool_name": "a", "arguments": [1]}\n', "calls.jsonl:1: 'arguments' must be an object"),
        ("[1]\n", "calls.jsonl:1: expected a JSON object"),
    ],
)
def test_a_bad_calls_file_names_the_line_and_writes_nothing(
    tmp_path: Path, catalogue: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text(content)
    assert main("--catalogue", catalogue, "--calls", calls) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err


def test_without_a_catalogue_the_cache_is_used_and_its_absence_explained(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    assert main("--tool", "x") == 2
    assert "no cached tools of enabled servers" in capsys.readouterr().err


def test_the_installed_command_reads_calls_from_stdin(catalogue: Path, home: Path) -> None:
    call = json.dumps({"id": 1, "tool_name": "fs/delete_file", "arguments": {"file_path": "/tmp/a"}})
    done = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "resolve", "--catalogue", str(catalogue), "--calls", "-"],
        input=call + "\n",
        capture_output=True,
        text=True,
        env={"MCPMANAGER_HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=True,
    )
    [out] = lines(done.stdout)
    assert out["resolved"]["name"] == "delete_file" and out["how"] == "namespaced"
    assert out["arguments"] == {"path": "/tmp/a"} and out["renamed"] == {"file_path": "path"}
