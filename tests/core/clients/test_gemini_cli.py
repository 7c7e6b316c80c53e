"""Gemini CLI (`~/.gemini/settings.json`, its user settings), on Linux, macOS and Windows: where its
file is, how its own keys are read (`httpUrl`, `url` and `type`), and the round trips on its sample
file of tests/data/clients (written from its documentation; JSONC with every other setting): import
dry run and real, install with every byte outside mcpmanager's entry kept (its `mcp.allowed` list
gains the name), undo byte for byte, turning off what mcpmanager serves, secrets masked. What every
client's sample goes through is in test_contract.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.errors import ClientNotFound
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

SAMPLE = (DATA / "gemini-cli" / "settings.json", ".gemini/settings.json")
FAKE_SECRETS = ["ghp_FAKE0000000000000000000000000gemini", "FAKE-amap-key-0000"]
NAMES = [
    "pythonTools",
    "nodeServer",
    "githubCopilot",
    "amap",
    "discoveredServer",
    "typedServer",
    "filteredServer",
]


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = {w.client: (w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})}
    assert places["gemini-cli"] == ("Gemini CLI", tmp_path / ".gemini/settings.json", "gemini")
    home = home_with(tmp_path, SAMPLE)
    found = [(c.client, c.label, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("gemini-cli", "Gemini CLI", home / SAMPLE[1], NAMES)]


def test_gemini_cli_home_moves_the_gemini_folder(tmp_path: Path) -> None:
    """Gemini CLI takes `GEMINI_CLI_HOME` for the home folder (case-insensitive on Windows)."""
    other = tmp_path / "profile"
    for platform, key in (("linux", "GEMINI_CLI_HOME"), ("darwin", "GEMINI_CLI_HOME"), ("win32", "gemini_cli_home")):
        places = {w.client: w.path for w in client_locations(tmp_path, platform, {key: str(other)})}
        assert places["gemini-cli"] == other / ".gemini" / "settings.json", platform
        assert places["windsurf"] == tmp_path / ".codeium/windsurf/mcp_config.json"
    relative = {w.client: w.path for w in client_locations(tmp_path, "linux", {"GEMINI_CLI_HOME": "rel/dir"})}
    assert relative["gemini-cli"] == tmp_path / ".gemini" / "settings.json"  # not a folder one can know


def test_not_found_names_the_place(tmp_path: Path) -> None:
    with pytest.raises(ClientNotFound, match=r"Gemini CLI not found \(looked at .*\.gemini.settings\.json\)"):
        install_targets("gemini-cli", tmp_path, "linux", {})


# Reading -------------------------------------------------------------------------------------------


def test_http_url_url_and_type() -> None:
    path = SAMPLE[0]
    read = read_client_config("gemini-cli", path, "gemini", home=Path("/home/u"))
    python_env = {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"}
    copilot = {"Authorization": "Bearer ghp_FAKE0000000000000000000000000gemini"}
    assert read.servers == [
        StdioServerConfig(
            "pythonTools", "python", ["-m", "my_mcp_server", "--port", "8080"], python_env, "./mcp-servers/python"
        ),
        StdioServerConfig("nodeServer", "node", ["dist/server.js", "--verbose"]),  # trust: not mcpmanager's
        HttpServerConfig("githubCopilot", "https://api.githubcopilot.example/mcp/", copilot, transport="http"),
        HttpServerConfig("amap", "https://mcp.amap.example/mcp?key=FAKE-amap-key-0000", transport="http"),
        HttpServerConfig("discoveredServer", "https://api.example.com/sse", transport="sse"),
        HttpServerConfig("typedServer", "https://mcp.example.com/mcp", transport="http"),
        StdioServerConfig("filteredServer", "python", ["-m", "my_mcp_server"]),
    ]
    assert read.problems == [
        f"{path}:11:20: mcpServers.pythonTools: uses ${{EXTERNAL_API_KEY}}, $DB_CONNECTION_STRING: left as "
        "written (mcpmanager does not expand them)",
        f"{path}:34:14: mcpServers.discoveredServer.url: read as SSE, as Gemini CLI's documentation has it (newer "
        'Gemini CLI tries Streamable HTTP first): if the server speaks Streamable HTTP, make its type "http" in '
        "mcpmanager",
    ]
    assert not [secret for secret in FAKE_SECRETS for line in read.problems if secret in line]


def test_which_key_wins_as_in_gemini_cli(tmp_path: Path) -> None:
    gemini = tmp_path / "settings.json"
    servers = {
        "all": {"httpUrl": "https://a.example/mcp", "url": "https://a.example/sse", "command": "a"},
        "both": {"url": "https://b.example/sse", "command": "b"},
        "sse": {"url": "https://c.example/sse", "type": "sse"},
    }
    gemini.write_text(json.dumps({"mcpServers": servers}))
    read = read_client_config("gemini-cli", gemini, "gemini")
    assert read.servers == [
        HttpServerConfig("all", "https://a.example/mcp"),
        HttpServerConfig("both", "https://b.example/sse", transport="sse"),
        HttpServerConfig("sse", "https://c.example/sse", transport="sse"),
    ]
    first = "not read: Gemini CLI uses httpUrl before url, and a URL before command"
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        f"mcpServers.all.url: {first}",
        f"mcpServers.all.command: {first}",
        "mcpServers.both.url: read as SSE, as Gemini CLI's documentation has it (newer Gemini CLI tries "
        'Streamable HTTP first): if the server speaks Streamable HTTP, make its type "http" in mcpmanager',
        f"mcpServers.both.command: {first}",
    ]


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("gemini-cli", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    assert saved["discoveredServer"] == {"type": "sse", "url": "https://api.example.com/sse"}
    assert load_config(config).servers["githubCopilot"] == HttpServerConfig(
        "githubCopilot",
        "https://api.githubcopilot.example/mcp/",
        {"Authorization": "Bearer ghp_FAKE0000000000000000000000000gemini"},
    )
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("gemini-cli", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    [target] = install_targets("gemini-cli", home, platform, {})
    assert target.path == home / SAMPLE[1]
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after)
    assert doc["mcpServers"].pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert doc["mcp"]["allowed"].pop() == "mcpmanager"  # its allowlist names mcpmanager too, or Gemini CLI blocks it
    assert doc == parse(before)  # every other setting and server, as it was
    # The list, on its one line, gains the name and nothing else.
    kept = before.decode("utf-8").replace('"discoveredServer"]', '"discoveredServer", "mcpmanager"]', 1)
    added = inserted_only(kept, after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    assert "\r" not in added and "\n    " in added
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
    apply_import(plan_import("gemini-cli", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("gemini-cli", home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    # Servers read through Gemini CLI's own keys (httpUrl, url) are recognised as served.
    assert list(change.moved) == NAMES
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes())
    assert list(doc["mcpServers"]) == ["mcpmanager"]
    assert list(doc[STASH_KEY]) == NAMES
    assert inspect(target, config, home).disabled == tuple(NAMES)

    apply_change(plan_undo(target))
    assert files_under(home) == original


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env, headers and
    Gemini CLI's httpUrl, are masked."""
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("gemini-cli", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff and "https://mcp.amap.example/mcp?key=***" in diff


def test_undo_after_gemini_rewrote_its_settings_keeps_the_change(tmp_path: Path) -> None:
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("gemini-cli", home, "linux", {})
    before = parse(target.path.read_bytes())
    apply_change(plan_install(target, COMMAND))
    target.path.write_text(target.path.read_text().replace('"theme": "Dracula"', '"theme": "GitHub"'))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact
    apply_change(undo)
    doc = parse(target.path.read_bytes())
    assert doc["theme"] == "GitHub" and "mcpmanager" not in doc["mcpServers"]
    assert doc == {**before, "theme": "GitHub"}
    assert "// Gemini CLI's user settings" in target.path.read_text()
    assert list_backups(target.path)[0].read_bytes() == SAMPLE[0].read_bytes()
