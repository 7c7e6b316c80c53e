"""Zed (`settings.json`, `context_servers`, JSONC), on Linux, macOS and Windows: where its file is, how
its entries are read (each form Zed has had), and the round trips on its sample file of
tests/data/clients (written from its documentation): import dry run and real, install with every
byte outside mcpmanager's entry kept, undo byte for byte, turning off what mcpmanager serves with
Zed's own switch, secrets masked, a file that does not read refused with nothing changed. What every
client's sample goes through is in test_contract.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.errors import InstallError
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

SAMPLE = DATA / "zed" / "settings.json"
# where Zed's file stands on each platform
ZED = {
    "linux": ".config/zed/settings.json",
    "darwin": ".config/zed/settings.json",
    "win32": "AppData/Roaming/Zed/settings.json",
}
NAMES = ["github", "filesystem", "postgres", "remote-mcp-server", "linear", "time"]
SERVED = ["github", "filesystem", "postgres", "remote-mcp-server", "linear"]  # what mcpmanager serves, on in Zed
FAKE_SECRETS = ["ghp_FAKE000000000000000000000000000000zed", "FAKE-zed-pg-password-0000", "FAKE-zed-token-0000"]


def servers_of(doc: dict[str, Any]) -> dict[str, Any]:
    servers = doc["context_servers"]
    assert isinstance(servers, dict)
    return servers


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})]
    assert [p for p in places if p[0] == "zed"] == [("zed", "Zed", tmp_path / ZED[platform], "zed")]
    home = home_with(tmp_path, (SAMPLE, ZED[platform]))
    found = [(c.client, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("zed", home / ZED[platform], NAMES)]


def test_the_environment_moves_it(tmp_path: Path) -> None:
    """Zed follows XDG_CONFIG_HOME on Linux only (macOS: ~/.config/zed whatever it says) and APPDATA on
    Windows."""
    other = tmp_path / "elsewhere"

    def where(platform: str, env: dict[str, str]) -> dict[str, Path]:
        return {w.label: w.path for w in client_locations(tmp_path, platform, env)}

    assert where("linux", {"XDG_CONFIG_HOME": str(other)})["Zed"] == other / "zed/settings.json"
    assert where("darwin", {"XDG_CONFIG_HOME": str(other)})["Zed"] == tmp_path / ".config/zed/settings.json"
    assert where("win32", {"appdata": str(other)})["Zed"] == other / "Zed/settings.json"


def test_not_found_names_the_place_and_a_bare_folder_is_enough(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"Zed not found \(looked at .*zed.settings\.json\)"):
        install_targets("zed", tmp_path, "linux", {})
    (tmp_path / ".config/zed").mkdir(parents=True)
    [target] = install_targets("zed", tmp_path, "darwin", {})
    apply_change(plan_install(target, COMMAND, "discovery"))
    entry = {"command": COMMAND[0], "args": ["connect", "--mode", "discovery"], "env": {}}
    assert parse(target.path.read_bytes()) == {"context_servers": {"mcpmanager": entry}}
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Reading -------------------------------------------------------------------------------------------


def test_entries_in_each_form() -> None:
    read = read_client_config("zed", SAMPLE, "zed", home=Path("/home/u"))
    assert read.servers == [
        StdioServerConfig(
            "github",
            "npx",
            ["-y", "@modelcontextprotocol/server-github"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE000000000000000000000000000000zed"},
        ),
        StdioServerConfig("filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/projects"]),
        StdioServerConfig(
            "postgres",
            "uvx",
            ["mcp-server-postgres", "postgresql://localhost/notes"],
            {"PGPASSWORD": "FAKE-zed-pg-password-0000"},
        ),
        HttpServerConfig(
            "remote-mcp-server", "https://mcp.example.com/mcp", {"Authorization": "Bearer FAKE-zed-token-0000"}
        ),
        HttpServerConfig("linear", "https://mcp.linear.example/mcp"),
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone=Europe/Paris"], disabled=True),
    ]
    # a profile's `context_servers` (agent.profiles.research) is not a server list: not read
    assert read.problems == [
        f"{SAMPLE}:65:28: context_servers.mcp-server-context7: a server of a Zed extension: Zed starts it from the "
        "extension; not imported"
    ]


def test_oddities(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    servers = {
        "no-path": {"command": {"args": ["x"]}},
        "odd": {"command": "a", "enabled": "no"},
        "settings-only": {"settings": {"key": "v"}},
    }
    path.write_text(json.dumps({"context_servers": servers}))
    read = read_client_config("zed", path, "zed")
    assert read.servers == [StdioServerConfig("odd", "a")]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        'context_servers.no-path.command: expected "path" in Zed\'s older command object; not imported',
        "context_servers.odd.enabled: expected true or false; read as enabled",
        "context_servers.settings-only: a server of a Zed extension: Zed starts it from the extension; not imported",
    ]


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, (SAMPLE, ZED[platform]))
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("zed", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    loaded = load_config(config).servers
    assert saved["postgres"] == {
        "command": "uvx",
        "args": ["mcp-server-postgres", "postgresql://localhost/notes"],
        "env": {"PGPASSWORD": "FAKE-zed-pg-password-0000"},
    }
    assert loaded["time"].disabled and not loaded["filesystem"].disabled
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("zed", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, (SAMPLE, ZED[platform]))
    original = files_under(home)
    [target] = install_targets("zed", home, platform, {})
    assert target.path == home / ZED[platform]
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after)
    entry = {"command": COMMAND[0], "args": ["connect", "--mode", "direct"], "env": {}}
    assert servers_of(doc).pop("mcpmanager") == entry
    assert doc == parse(before)  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    assert added.rstrip().endswith("},") and "\r" not in added  # JSONC: its trailing commas, followed
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
    home = home_with(tmp_path, (SAMPLE, ZED["linux"]))
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("zed", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("zed", home, "linux", {})
    assert inspect(target, config, home).served == tuple(SERVED)

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    assert list(change.moved) == SERVED  # Zed's time is off already: left alone
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes())
    before = parse(original[ZED["linux"]])
    servers = servers_of(doc)
    # Zed's own switch, each entry otherwise as it was
    assert [n for n, s in servers.items() if s.get("enabled", True)] == ["mcp-server-context7", "mcpmanager"]
    assert {n: {k: v for k, v in s.items() if k != "enabled"} for n, s in servers.items() if n != "mcpmanager"} == {
        n: {k: v for k, v in s.items() if k != "enabled"} for n, s in servers_of(before).items()
    }
    assert STASH_KEY not in doc and doc["agent"] == before["agent"]
    assert inspect(target, config, home).disabled == tuple(SERVED)
    assert inspect(target, config, home).served == ()

    undo = plan_undo(target)
    assert undo.exact and list(undo.moved) == SERVED
    apply_change(undo)
    assert files_under(home) == original
    assert inspect(target, config, home).disabled == ()


def test_undo_after_zed_rewrote_its_file_keeps_the_change(tmp_path: Path) -> None:
    """Zed edits its settings.json itself: undo then takes out mcpmanager's entry and gives each
    server it turned off its switch back as the file had it before the install."""
    home = home_with(tmp_path, (SAMPLE, ZED["linux"]))
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("zed", config_path, home, "linux", {}), config_path)
    [target] = install_targets("zed", home, "linux", {})
    before = target.path.read_bytes()
    apply_change(plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home))
    old, new = b'"vim_mode": true', b'"vim_mode": false'
    target.path.write_bytes(target.path.read_bytes().replace(old, new))

    undo = plan_undo(target)
    assert undo.changed and not undo.exact and list(undo.moved) == SERVED
    assert (
        "your edits are kept, only mcpmanager's entry removed and the servers it turned off turned on again"
        in (undo.notes[0])
    )
    apply_change(undo)
    assert target.path.read_bytes() == before.replace(old, new)  # every switch as it was, key for key
    assert list_backups(target.path)[0].read_bytes() == before  # kept for the user


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env and headers (Zed's
    older nested command object too), are masked."""
    home = home_with(tmp_path, (SAMPLE, ZED["linux"]))
    [target] = install_targets("zed", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff


def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = home_with(tmp_path, (SAMPLE, ZED["linux"]))
    [target] = install_targets("zed", home, "linux", {})
    target.path.write_bytes(target.path.read_bytes().replace(b'"args"', b'"args" "', 1))
    original = files_under(home)
    with pytest.raises(InstallError, match=rf"^{target.path}:\d+:\d+: invalid JSON: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match="invalid JSON"):
        plan_undo(target)
    assert inspect(target).problem is not None
    [read] = find_client_configs(home, "linux", {})
    assert read.servers == [] and [p.split(": ", 1)[1].split(":", 1)[0] for p in read.problems] == ["invalid JSON"]
    assert files_under(home) == original
