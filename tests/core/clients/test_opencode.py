"""OpenCode (`~/.config/opencode/opencode.json`, its `mcp` object): a row of the clients' table and
a dialect of its own (one list for the command, its own off switch, two forms of the file); what the
contract suite (test_contract.py) does not say about it."""

from __future__ import annotations

import json
from pathlib import Path

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.install import inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]


def opencode_places(home: Path, env: dict[str, str], platform: str = "linux") -> list[tuple[str, Path]]:
    return [(w.label, w.path) for w in client_locations(home, platform, env) if w.client == "opencode"]


def test_the_places(tmp_path: Path) -> None:
    for platform in ("linux", "darwin", "win32"):  # XDG's folder on every platform, as OpenCode has it
        assert opencode_places(tmp_path, {}, platform) == [("OpenCode", tmp_path / ".config/opencode/opencode.json")]
    xdg = tmp_path / "xdg"
    assert opencode_places(tmp_path, {"XDG_CONFIG_HOME": str(xdg)}) == [("OpenCode", xdg / "opencode/opencode.json")]
    (tmp_path / ".config/opencode").mkdir(parents=True)
    (tmp_path / ".config/opencode/opencode.jsonc").write_text("{}")
    custom = tmp_path / "team.json"
    assert opencode_places(tmp_path, {"OPENCODE_CONFIG": str(custom)}) == [
        ("OpenCode", tmp_path / ".config/opencode/opencode.jsonc"),  # the .jsonc one when it is the only one
        ("OpenCode (OPENCODE_CONFIG)", custom),
    ]


def test_both_forms_read() -> None:
    first = read_client_config("opencode", DATA / "opencode" / "opencode.json", "opencode")
    assert first.problems == []
    assert first.servers == [
        StdioServerConfig("everything", "npx", ["-y", "@modelcontextprotocol/server-everything"]),
        StdioServerConfig(
            "github",
            "docker",
            ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE00000000000000000000000opencode"},
        ),
        HttpServerConfig(
            "jira", "https://jira.example.com/mcp", {"Authorization": "Bearer FAKE-jira-token-opencode"}, disabled=True
        ),
        HttpServerConfig("context7", "https://mcp.context7.example/mcp"),
    ]
    second = read_client_config("opencode", DATA / "opencode-v2" / "opencode.jsonc", "opencode")
    assert second.problems == []
    assert second.servers == [
        StdioServerConfig("my-server", "npx", ["-y", "example-mcp-server"]),
        HttpServerConfig("sentry", "https://mcp.sentry.example/mcp", disabled=True),
        StdioServerConfig("time", "uvx", ["mcp-server-time"], {"TZ": "Europe/Paris"}),
    ]


def test_an_entry_opencode_would_not_start_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "opencode.json"
    path.write_text(
        json.dumps({"mcp": {"a": {"type": "local", "command": "npx pkg"}, "b": {"type": "sse", "url": "x"}}})
    )
    read = read_client_config("opencode", path, "opencode")
    assert read.servers == []
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "mcp.a.command: expected the command and its arguments as one list of strings; not imported",
        "mcp.b.type: expected 'local' or 'remote', got 'sse'; not imported",
    ]


def test_a_new_file_gets_the_newer_form_and_each_file_keeps_its_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    [target] = install_targets("opencode", home, "linux", {})
    apply_change(plan_install(target, COMMAND, "discovery"))
    entry = {"type": "local", "command": [COMMAND[0], "connect", "--mode", "discovery"]}
    assert json.loads(target.path.read_text()) == {"mcp": {"servers": {"mcpmanager": entry}}}
    assert inspect(target).mode == "discovery"  # read from the command's list
    apply_change(plan_undo(target))
    assert not target.path.exists()

    target.path.write_text(
        '{\n  "mcp": {\n    "time": {"type": "local", "command": ["uvx", "mcp-server-time"]}\n  }\n}\n'
    )
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    change = plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home)
    assert change.moved == ("time",)
    apply_change(change)
    doc = json.loads(clean_jsonc(target.path.read_text()))
    assert doc["mcp"]["time"]["enabled"] is False  # this file's form: `enabled`
    assert doc["mcp"]["mcpmanager"] == {"type": "local", "command": [COMMAND[0], "connect"], "enabled": True}
    assert inspect(target, load_config(config_path), home).disabled == ("time",)
