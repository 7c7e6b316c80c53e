"""Cline (`cline_mcp_settings.json`, strict JSON), on Linux, macOS and Windows: where its files are,
how its types are read as Cline reads them, and the round trips on its sample file of
tests/data/clients (written from its documentation; CRLF line ends, 4-space indents): import dry run
and real, install with every byte outside mcpmanager's entry kept, undo byte for byte, turning off
what mcpmanager serves with Cline's own switch, secrets masked, a file that does not read refused,
both of its files written and undone. What every client's sample goes through is in test_contract.py."""

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

CLINE_FILE = ".cline/data/settings/cline_mcp_settings.json"  # the same on every platform
SAMPLE = (DATA / "cline" / "cline_mcp_settings.json", CLINE_FILE)
BRAVE = "github.com/modelcontextprotocol/servers/tree/main/src/brave-search"
BRAVE_NAME = "github.com-modelcontextprotocol-servers-tree-main-src-brave-search"
NAMES = [BRAVE_NAME, "weather", "name2empid", "remote-notes", "legacy-events", "old-sse", "sqlite"]
SERVED = [BRAVE, "weather", "name2empid", "remote-notes", "legacy-events", "old-sse"]  # by their keys in the file
FAKE_SECRETS = ["FAKE-brave-key-0000", "FAKE-weather-key-0000", "FAKE-cline-token-0000"]


def servers_of(doc: dict[str, Any]) -> dict[str, Any]:
    servers = doc["mcpServers"]
    assert isinstance(servers, dict)
    return servers


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_places_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})]
    code = {"linux": ".config", "darwin": "Library/Application Support", "win32": "AppData/Roaming"}[platform]
    legacy = "User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    assert [p for p in places if p[0] == "cline"] == [
        ("cline", "Cline", tmp_path / CLINE_FILE, "cline"),
        ("cline", "Cline (VS Code)", tmp_path / code / "Code" / legacy, "cline"),
        ("cline", "Cline (VS Code Insiders)", tmp_path / code / "Code - Insiders" / legacy, "cline"),
    ]
    home = home_with(tmp_path, SAMPLE)
    found = [(c.client, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("cline", home / CLINE_FILE, NAMES)]


def test_the_environment_moves_them(tmp_path: Path) -> None:
    """Cline's own variables, in its order; APPDATA moves the VS Code extension's place."""
    other = tmp_path / "elsewhere"

    def where(platform: str, env: dict[str, str]) -> dict[str, Path]:
        return {w.label: w.path for w in client_locations(tmp_path, platform, env)}

    assert where("win32", {"APPDATA": str(other)})["Cline (VS Code)"].parts[-7:-4] == ("elsewhere", "Code", "User")
    cline = {
        "CLINE_DIR": str(other / "dir"),
        "CLINE_DATA_DIR": str(other / "data"),
        "CLINE_MCP_SETTINGS_PATH": str(other / "mine.json"),
    }
    assert where("linux", cline)["Cline"] == other / "mine.json"
    del cline["CLINE_MCP_SETTINGS_PATH"]
    assert where("darwin", cline)["Cline"] == other / "data/settings/cline_mcp_settings.json"
    del cline["CLINE_DATA_DIR"]
    assert where("win32", cline)["Cline"] == other / "dir/data/settings/cline_mcp_settings.json"
    assert where("linux", {"CLINE_DIR": "relative/dir"})["Cline"] == tmp_path / CLINE_FILE  # not a folder one can know


# Reading -------------------------------------------------------------------------------------------


def test_types_as_cline_reads_them(tmp_path: Path) -> None:
    path = SAMPLE[0]
    read = read_client_config("cline", path, "cline", home=Path("/home/u"))
    weather = "C:\\Users\\user\\Documents\\Cline\\MCP\\weather-server\\build\\index.js"
    assert read.servers == [
        StdioServerConfig(
            BRAVE_NAME,
            "npx",
            ["-y", "@modelcontextprotocol/server-brave-search"],
            {"BRAVE_API_KEY": "FAKE-brave-key-0000"},
        ),
        StdioServerConfig("weather", "node", [weather], {"OPENWEATHER_API_KEY": "FAKE-weather-key-0000"}),
        HttpServerConfig("name2empid", "https://mcp.internal.example/sse", transport="sse"),
        HttpServerConfig(
            "remote-notes", "https://notes.example.com/mcp", {"Authorization": "Bearer FAKE-cline-token-0000"}
        ),
        HttpServerConfig("legacy-events", "https://events.example.com/mcp"),  # transportType "http": Streamable HTTP
        HttpServerConfig("old-sse", "https://old.example.com/sse", transport="sse"),  # no type: SSE, Cline's default
        StdioServerConfig("sqlite", "uvx", ["mcp-server-sqlite", "--db-path", "test.db"], disabled=True),
    ]
    assert read.problems == [
        f"{path}:3:9: mcpServers[\"{BRAVE}\"]: not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        f"imported as {BRAVE_NAME!r}"
    ]
    odd = tmp_path / "cline_mcp_settings.json"
    entries = {
        "both": {"command": "c", "url": "https://b.example/mcp"},  # stdio comes first in Cline
        "typed-sse": {"type": "sse", "command": "c", "url": "https://s.example/sse"},
        "legacy-sse": {"transportType": "sse", "url": "https://l.example/sse"},
        "ws": {"type": "websocket", "url": "wss://w.example"},
    }
    odd.write_text(json.dumps({"mcpServers": entries}))
    read = read_client_config("cline", odd, "cline")
    assert read.servers == [
        StdioServerConfig("both", "c"),
        HttpServerConfig("typed-sse", "https://s.example/sse", transport="sse"),
        HttpServerConfig("legacy-sse", "https://l.example/sse", transport="sse"),
    ]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "mcpServers.ws.type: unknown type 'websocket' (Cline's are stdio, sse and streamableHttp); not imported"
    ]


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("cline", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    loaded = load_config(config).servers
    assert saved["old-sse"] == {"type": "sse", "url": "https://old.example.com/sse"}
    assert saved["remote-notes"]["type"] == "http" and "transportType" not in saved["legacy-events"]
    assert loaded["sqlite"].disabled
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("cline", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    [target] = install_targets("cline", home, platform, {})
    assert target.path == home / CLINE_FILE
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after)
    assert servers_of(doc).pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert doc == parse(before)  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    # its CRLF line ends and 4-space indents, followed
    assert after.count(b"\n") == after.count(b"\r\n") and '\r\n            "command"' in added
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
    apply_import(plan_import("cline", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("cline", home, "linux", {})
    assert inspect(target, config, home).served == tuple(SERVED)

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    assert list(change.moved) == SERVED  # Cline's sqlite is off already: left alone
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes())
    servers = servers_of(doc)
    # Cline's own switch
    assert [n for n, s in servers.items() if not s.get("disabled", False)] == ["mcpmanager"]
    assert servers[BRAVE]["autoApprove"] == ["brave_web_search"] and STASH_KEY not in doc
    assert inspect(target, config, home).disabled == tuple(SERVED)
    assert inspect(target, config, home).served == ()

    undo = plan_undo(target)
    assert undo.exact and list(undo.moved) == SERVED
    apply_change(undo)
    assert files_under(home) == original
    assert inspect(target, config, home).disabled == ()


def test_undo_after_cline_rewrote_its_file_keeps_the_change(tmp_path: Path) -> None:
    """Cline edits its file itself: undo then takes out mcpmanager's entry and gives each server it
    turned off its switch back as the file had it before the install."""
    home = home_with(tmp_path, SAMPLE)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("cline", config_path, home, "linux", {}), config_path)
    [target] = install_targets("cline", home, "linux", {})
    before = target.path.read_bytes()
    apply_change(plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home))
    old, new = b'"timeout": 120', b'"timeout": 300'
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
    """Every line of the sample in a diff (all of it removed): its secrets, in env and headers, are masked."""
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("cline", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff


def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("cline", home, "linux", {})
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


def test_both_cline_files_are_written_and_undone(tmp_path: Path) -> None:
    """A user with Cline's current file and the one its VS Code extension kept before: import reads
    both (the same servers once), install writes both, undo restores both."""
    home = home_with(tmp_path, SAMPLE)
    legacy = home / "AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b'{\n  "mcpServers": {\n    "old": {"command": "old-server"}\n  }\n}\n')
    original = files_under(home)
    plan = plan_import("cline", tmp_path / "config.json", home, "win32", {})
    assert [a.name for a in plan.added] == [*NAMES, "old"]
    targets = install_targets("cline", home, "win32", {})
    assert [(t.label, t.path) for t in targets] == [("Cline", home / CLINE_FILE), ("Cline (VS Code)", legacy)]
    for target in targets:
        apply_change(plan_install(target, COMMAND))
    assert "mcpmanager" in parse(legacy.read_bytes())["mcpServers"]
    for target in targets:
        apply_change(plan_undo(target))
    assert files_under(home) == original
