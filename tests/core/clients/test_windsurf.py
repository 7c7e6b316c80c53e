"""Windsurf (`~/.codeium/windsurf/mcp_config.json`), on Linux, macOS and Windows: where its file is,
how its own keys are read (`serverUrl`), and the round trips on its sample file of tests/data/clients
(written from its documentation; CRLF line ends and tabs): import dry run and real, install with every
byte outside mcpmanager's entry kept, undo byte for byte, turning off what mcpmanager serves, secrets
masked. What every client's sample goes through is in test_contract.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.importing import plan_import
from mcpmanager.core.clients.install import STASH_KEY, inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import find_client_configs, read_client_config
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from tests.core.clients.sample_files import (
    COMMAND,
    DATA,
    PLATFORMS,
    apply_import,
    files_under,
    home_with,
    inserted_only,
    parse,
)

SAMPLE = (DATA / "windsurf" / "mcp_config.json", ".codeium/windsurf/mcp_config.json")
FAKE_SECRETS = ["ghp_FAKE000000000000000000000000windsurf", "FAKE-windsurf-token-0000"]
NAMES = ["github", "figma", "talaria", "tidewave", "git"]


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = {w.client: (w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})}
    assert places["windsurf"] == ("Windsurf", tmp_path / ".codeium/windsurf/mcp_config.json", "windsurf")
    home = home_with(tmp_path, SAMPLE)
    found = [(c.client, c.label, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("windsurf", "Windsurf", home / SAMPLE[1], NAMES)]


def test_a_bare_folder_is_enough(tmp_path: Path) -> None:
    (tmp_path / ".codeium/windsurf").mkdir(parents=True)  # Windsurf ran, its file not made yet
    [target] = install_targets("windsurf", tmp_path, "win32", {})
    apply_change(plan_install(target, COMMAND))
    entry = {"command": COMMAND[0], "args": ["connect"]}
    assert parse(target.path.read_bytes()) == {"mcpServers": {"mcpmanager": entry}}
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Reading -------------------------------------------------------------------------------------------


def test_server_url_is_the_url() -> None:
    path = SAMPLE[0]
    read = read_client_config("windsurf", path, "windsurf", home=Path("/home/u"))
    github_env = {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE000000000000000000000000windsurf"}
    assert read.servers == [
        StdioServerConfig("github", "npx", ["-y", "@modelcontextprotocol/server-github"], github_env),
        HttpServerConfig("figma", "https://mcp.figma.example/mcp", {"Authorization": "Bearer ${env:AUTH_TOKEN}"}),
        HttpServerConfig(
            "talaria", "https://api.talaria.example/mcp", {"Authorization": "Bearer FAKE-windsurf-token-0000"}
        ),
        HttpServerConfig("tidewave", "http://localhost:4000/tidewave/mcp"),
        StdioServerConfig("git", "py", ["-m", "mcp_server_git"], disabled=True),
    ]
    assert read.problems == [
        f"{path}:8:13: mcpServers.figma: uses ${{env:AUTH_TOKEN}}: left as written (mcpmanager does not expand them)"
    ]


def test_server_url_comes_first_and_is_windsurfs_own(tmp_path: Path) -> None:
    windsurf = tmp_path / "mcp_config.json"
    entries = {"same": {"serverUrl": "https://s.example/mcp", "url": "https://s.example/mcp"}}
    entries["other"] = {"serverUrl": "https://o.example/mcp", "url": "https://elsewhere.example/mcp"}
    windsurf.write_text(json.dumps({"mcpServers": entries}))
    read = read_client_config("windsurf", windsurf, "windsurf")
    assert read.servers == [
        HttpServerConfig("same", "https://s.example/mcp"),
        HttpServerConfig("other", "https://o.example/mcp"),
    ]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "mcpServers.other.url: not read: serverUrl is written too, and comes first"
    ]
    # The same keys in Claude Desktop's or Cursor's file are not theirs: not read there.
    plain = read_client_config("cursor", windsurf, "mcpServers")
    assert [s.name for s in plain.servers] == ["same", "other"]
    assert {s.url for s in plain.servers if isinstance(s, HttpServerConfig)} == {
        "https://s.example/mcp",
        "https://elsewhere.example/mcp",
    }


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("windsurf", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    assert saved["figma"]["url"] == "https://mcp.figma.example/mcp" and "serverUrl" not in saved["figma"]
    assert load_config(config).servers["figma"] == HttpServerConfig(
        "figma", "https://mcp.figma.example/mcp", {"Authorization": "Bearer ${env:AUTH_TOKEN}"}
    )
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("windsurf", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    [target] = install_targets("windsurf", home, platform, {})
    assert target.path == home / SAMPLE[1]
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after)
    assert doc["mcpServers"].pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert doc == parse(before)  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    # its CRLF line ends and tabs, followed
    assert "\r\n" in added and after.count(b"\n") == after.count(b"\r\n") and "\t\t" in added
    assert backup is not None and backup.read_bytes() == before and backup.parent == target.path.parent
    assert inspect(target).mode == "direct"

    again = plan_install(target, COMMAND, "direct")
    assert not again.changed and apply_change(again) is None

    undo = plan_undo(target)
    assert undo.changed and undo.exact and undo.restore == backup
    apply_change(undo)
    assert files_under(home) == original  # byte for byte, and the backup gone
    assert inspect(target).mode is None


def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("windsurf", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("windsurf", home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    # Servers read through Windsurf's own key (serverUrl) are recognised as served.
    served = [n for n in NAMES if n != "git"]
    assert list(change.moved) == served  # Windsurf's disabled git is not served: it stays
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes())
    assert list(doc["mcpServers"]) == ["git", "mcpmanager"]
    assert list(doc[STASH_KEY]) == served
    assert inspect(target, config, home).disabled == tuple(served)

    apply_change(plan_undo(target))
    assert files_under(home) == original


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env, headers and
    Windsurf's serverUrl, are masked."""
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("windsurf", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff
