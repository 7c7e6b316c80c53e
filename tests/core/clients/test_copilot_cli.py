"""GitHub Copilot CLI (`~/.copilot/mcp-config.json`, `$COPILOT_HOME/mcp-config.json`): a row of the
clients' table and Claude-style JSON with typed entries and a tool list; what the contract suite
(test_contract.py) does not say about it: its place, how its sample reads, mcpmanager's entry there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.install import STASH_KEY, bridge_entry, install_targets, plan_install
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "clients" / "copilot-cli" / "mcp-config.json"
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]


def test_the_place_and_copilot_home(tmp_path: Path) -> None:
    for platform in ("linux", "darwin", "win32"):
        [place] = [w for w in client_locations(tmp_path, platform, {}) if w.client == "copilot-cli"]
        assert (place.label, place.path, place.layout) == (
            "GitHub Copilot CLI",
            tmp_path / ".copilot" / "mcp-config.json",
            "copilot",
        )
    moved = tmp_path / "elsewhere"
    [place] = [
        w for w in client_locations(tmp_path, "linux", {"COPILOT_HOME": str(moved)}) if w.client == "copilot-cli"
    ]
    assert place.path == moved / "mcp-config.json"


def test_the_sample_reads_local_and_stdio_alike() -> None:
    read = read_client_config("copilot-cli", SAMPLE, "copilot")
    assert read.problems == []
    assert read.servers == [
        StdioServerConfig("playwright", "npx", ["@playwright/mcp@latest"]),
        StdioServerConfig(
            "context7",
            "npx",
            ["-y", "@upstash/context7-mcp"],
            {"CONTEXT7_API_KEY": "ctx7sk-FAKE0000000000000000copilot"},
        ),
        HttpServerConfig(
            "github",
            "https://api.githubcopilot.com/mcp/readonly",
            {
                "Authorization": "Bearer ghp_FAKE0000000000000000000000000copilot",
                "X-MCP-Toolsets": "repos,issues,pull_requests",
            },
        ),
        HttpServerConfig("cloudflare-docs", "https://docs.mcp.cloudflare.example/sse", transport="sse"),
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone=Europe/Paris"]),
    ]


def test_mcpmanagers_entry_is_typed_with_every_tool_and_served_servers_are_stashed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".copilot").mkdir(parents=True)
    path = home / ".copilot" / "mcp-config.json"
    shutil.copyfile(SAMPLE, path)
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    [target] = install_targets("copilot-cli", home, "linux", {})
    change = plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home)
    assert change.moved == ()  # `time` there has other arguments: not the same server
    apply_change(change)
    doc = json.loads(path.read_text())
    assert doc["mcpServers"]["mcpmanager"] == {
        "type": "stdio",
        "command": COMMAND[0],
        "args": ["connect"],
        "tools": ["*"],  # Copilot CLI requires the list: all of mcpmanager's tools
        "deferTools": "never",  # discovery mode (the config's default): never behind Copilot CLI's tool search
    }
    config_path.write_text(json.dumps({"mcpServers": {"play": {"command": "npx", "args": ["@playwright/mcp@latest"]}}}))
    again = plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home)
    assert again.moved == ("playwright",)
    apply_change(again)
    doc = json.loads(path.read_text())
    assert "playwright" not in doc["mcpServers"] and doc[STASH_KEY]["playwright"]["type"] == "local"


def test_in_direct_mode_copilot_clis_own_tool_search_may_defer_mcpmanagers_tools() -> None:
    """`deferTools` (Copilot CLI 1.0.64 and later: "auto" or "never") is written in discovery mode only."""
    assert "deferTools" not in bridge_entry("copilot", COMMAND, "direct")
    assert bridge_entry("copilot", COMMAND, "discovery", engine_mode="direct")["deferTools"] == "never"
