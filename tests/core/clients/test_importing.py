"""Importing the servers of Claude Desktop, Cursor, VS Code and Claude Code (the fixtures' sample
files) into mcpmanager's config: what is added, skipped and renamed, what is kept, what is refused,
and the round trip import → install --disable-served → undo."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.errors import ClientNotFound
from mcpmanager.core.clients.importing import (
    ImportPlan,
    is_bridge,
    merge,
    plan_import,
    read_client,
    same_definition,
    served_by,
)
from mcpmanager.core.clients.install import STASH_KEY, install_targets, plan_install, plan_undo
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.save import save_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from mcpmanager.core.engine.control import Control
from tests.helpers.client_samples import SAMPLES

HOMES = {"linux": "linux", "macos": "darwin", "windows": "win32", "formats": "linux"}
CLIENTS = ["claude-desktop", "cursor", "vscode", "claude-code"]


def apply_import(plan: ImportPlan, config: Path) -> ImportPlan:
    """What `mcpmanager import` does after its preview: the plan's servers through `Control`."""
    added, skipped = anyio.run(Control(config).import_servers, plan.candidates)
    return replace(plan, added=added, skipped=skipped)


def home_copy(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "home"
    shutil.copytree(SAMPLES / name, folder)
    return folder


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_import_adds_every_server_of_the_client_and_reports_its_problems(tmp_path: Path) -> None:
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("vscode", config, SAMPLES / "linux", "linux", {})
    assert not config.exists()  # the preview writes nothing
    assert [a.name for a in plan.added] == [
        "github",
        "perplexity",
        "playwright",
        "fetch",
        "everything",
        "sqlite",
        "memory",
    ]
    assert [source.label for source in plan.sources] == ["VS Code", "VS Code (settings.json)"]
    # VS Code's inputs: imported as written, and said.
    assert len(plan.problems) == 3
    assert "needs input 'github-token' (GitHub Personal Access Token)" in plan.problems[0]
    assert "needs input 'perplexity-key' (Perplexity API Key)" in plan.problems[1]
    assert "uses ${userHome}" in plan.problems[2]

    done = apply_import(plan, config)
    saved = load_config(config)
    assert list(saved.servers) == [a.name for a in done.added]
    github = saved.servers["github"]
    assert isinstance(github, HttpServerConfig) and github.headers == {"Authorization": "Bearer ${input:github-token}"}
    fetch = saved.servers["fetch"]
    assert isinstance(fetch, StdioServerConfig) and fetch.env["FETCH_TIMEOUT"] == "30"  # envFile read, env wins


def test_claude_code_user_and_project_scopes(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    plan = apply_import(plan_import("claude-code", config, SAMPLES / "linux", "linux", {}), config)
    assert list(load_config(config).servers) == ["git", "docs", "postgres", "postgres-api", "docs-api"]
    assert any("imported as 'postgres-api'" in p for p in plan.problems)
    windows = plan_import("claude-code", config, SAMPLES / "windows", "win32", {})
    assert [a.name for a in windows.added] == ["db", "db-blog"]


@pytest.mark.parametrize(("home", "client"), [(h, c) for h in HOMES for c in CLIENTS])
def test_importing_twice_adds_nothing_the_second_time(tmp_path: Path, home: str, client: str) -> None:
    config = tmp_path / "config.json"
    first = plan_import(client, config, SAMPLES / home, HOMES[home], {})
    apply_import(first, config)
    before = config.read_bytes() if config.exists() else None
    second = apply_import(plan_import(client, config, SAMPLES / home, HOMES[home], {}), config)
    assert second.added == []
    assert [s.reason for s in second.skipped] == [f"already in mcpmanager as {a.name!r}" for a in first.added]
    assert (config.read_bytes() if config.exists() else None) == before
    assert not (tmp_path / "config.json.bak").exists() or first.added == []


def test_identical_servers_are_skipped_and_taken_names_get_a_suffix(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    mine = {
        # The same filesystem server under another name: skipped.
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/alice/Documents", "/home/alice/Downloads"],
            "startTimeout": 90,
        },
        # A different github: the imported one becomes github-2.
        "github": {"command": "docker", "args": ["run", "ghcr.io/github/github-mcp-server"]},
        "github-2": {"command": "other"},
    }
    config.write_text(json.dumps({"mcpServers": mine, "myOwnKey": {"kept": True}}, indent=2))
    plan = apply_import(plan_import("claude-desktop", config, SAMPLES / "linux", "linux", {}), config)
    assert [(s.server.name, s.reason) for s in plan.skipped] == [("filesystem", "already in mcpmanager as 'files'")]
    assert [(a.server.name, a.name) for a in plan.added] == [("github", "github-3"), ("memory", "memory")]
    saved = json.loads(config.read_text())
    assert list(saved["mcpServers"]) == ["files", "github", "github-2", "github-3", "memory"]
    assert saved["mcpServers"]["files"] == mine["files"] and saved["mcpServers"]["github"] == mine["github"]
    assert saved["myOwnKey"] == {"kept": True}  # unknown keys survive
    assert saved["mcpServers"]["memory"]["disabled"] is True  # as it was in the client
    assert (tmp_path / "config.json.bak").exists()


def test_a_broken_mcpmanager_config_is_refused_and_left_untouched(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{\n  "mcpServers": {"a": {"command": 5}}\n}\n')
    before = files_under(tmp_path)
    with pytest.raises(ConfigError) as error:
        plan_import("cursor", config, SAMPLES / "linux", "linux", {})
    assert str(error.value) == f"{config}:2:35: mcpServers.a.command: expected a string, got number"
    assert files_under(tmp_path) == before


def test_an_edit_made_between_preview_and_import_is_kept(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    plan = plan_import("cursor", config, SAMPLES / "macos", "darwin", {})
    save_config(Config().with_server(StdioServerConfig("stripe", "mine")), config)  # meanwhile, the window
    done = apply_import(plan, config)
    assert [a.name for a in done.added] == ["stripe-2"]
    assert list(load_config(config).servers) == ["stripe", "stripe-2"]


def test_a_client_with_no_config_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(ClientNotFound) as error:
        read_client("claude-desktop", tmp_path, "darwin", {})
    expected = tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"
    assert str(error.value) == f"no Claude Desktop config found (looked at {expected})"
    with pytest.raises(ClientNotFound, match=r"unknown client 'vim' \(expected one of: claude-desktop, cursor"):
        read_client("vim", tmp_path)


def test_mcpmanagers_own_entry_is_never_imported(tmp_path: Path) -> None:
    bridge = StdioServerConfig("mcpmanager", "/opt/mcpmanager/bin/mcpmanager", ["connect"])
    old_style = StdioServerConfig("proxy", "mcpmanager", ["serve", "--stdio"])
    module = StdioServerConfig("mm", "/usr/bin/python3", ["-m", "mcpmanager", "connect", "--mode", "direct"])
    windows = StdioServerConfig("mm", "C:\\mcpmanager\\mcpmanager.exe", ["connect"])
    assert all(is_bridge(s) for s in (bridge, old_style, module, windows))
    assert not is_bridge(StdioServerConfig("notes", "mcpmanager-notes", ["serve"]))
    config, added, skipped = merge(Config(), [(bridge, tmp_path), (old_style, tmp_path)])
    assert config.servers == {} and added == [] and len(skipped) == 2


def test_what_counts_as_the_same_server() -> None:
    a = StdioServerConfig("a", "uvx", ["x"], {"K": "v"})
    assert same_definition(a, StdioServerConfig("b", "uvx", ["x"], {"K": "v"}, disabled=True, start_timeout=9))
    assert not same_definition(a, StdioServerConfig("a", "uvx", ["x"], {"K": "w"}))
    assert not same_definition(
        HttpServerConfig("h", "https://x.invalid/mcp"), HttpServerConfig("h", "https://x.invalid/mcp", transport="sse")
    )
    config = Config().with_server(StdioServerConfig("a", "uvx", ["x"], {"K": "filled in"}))
    assert served_by(a, config) == "a"  # same name, same command line: a token filled in since
    assert served_by(StdioServerConfig("b", "uvx", ["x"]), config) is None
    off = Config().with_server(StdioServerConfig("a", "uvx", ["x"], {"K": "v"}, disabled=True))
    assert served_by(a, off) is None  # disabled in mcpmanager: not served


@pytest.mark.parametrize(("home", "client"), [(h, c) for h in HOMES for c in CLIENTS])
def test_round_trip_import_then_install_turning_off_everything_imported_then_undo(
    tmp_path: Path, home: str, client: str
) -> None:
    """What a user does: bring the servers in, put mcpmanager in their place; undo brings all back."""
    folder = home_copy(tmp_path, home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    original = files_under(folder)
    apply_import(plan_import(client, config_path, folder, HOMES[home], {}), config_path)
    config = load_config(config_path)
    for target in install_targets(client, folder, HOMES[home], {}):
        change = plan_install(target, ["/usr/bin/mcpmanager"], config=config, disable_served=True, home=folder)
        apply_change(change)
        doc = json.loads(clean_jsonc(target.path.read_text(encoding="utf-8")))
        section = "servers" if target.layout == "vscode" else "mcpServers"
        # Only mcpmanager is left on, in every scope, except servers disabled in the client and so
        # imported disabled (mcpmanager does not serve them).
        on = [name for name in doc[section] if name != "mcpmanager" and not doc[section][name].get("disabled")]
        assert on == []
        for project in (doc.get("projects") or {}).values():
            assert project.get("mcpServers", {}) == {} or not any(
                served_by(s, config) for s in load_servers(project["mcpServers"])
            )
        stashes = [doc.get(STASH_KEY)] + [p.get(STASH_KEY) for p in (doc.get("projects") or {}).values()]
        assert sum(len(stash or {}) for stash in stashes) == len(change.moved)
    assert files_under(folder) != original
    for target in install_targets(client, folder, HOMES[home], {}):
        apply_change(plan_undo(target))
    assert files_under(folder) == original


def load_servers(entries: dict[str, object]) -> list[StdioServerConfig | HttpServerConfig]:
    from mcpmanager.core.config.load import parse_config

    return list(parse_config(json.dumps({"mcpServers": entries}), "x").servers.values())
