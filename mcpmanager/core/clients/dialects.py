"""Each layout's dialect (`dialect.Dialect`), by the layout a row of the clients' table names."""

from __future__ import annotations

from mcpmanager.core.clients import cline, zed
from mcpmanager.core.clients.codex import Codex
from mcpmanager.core.clients.dialect import Dialect
from mcpmanager.core.clients.json_servers import JsonServers
from mcpmanager.core.clients.json_switched import JsonSwitched, OpenCode
from mcpmanager.core.clients.locations import Layout
from mcpmanager.core.clients.yaml_dialects import Continue, Goose

DIALECTS: dict[Layout, Dialect] = {
    "mcpServers": JsonServers("mcpServers"),
    "vscode": JsonServers("vscode", ("servers",), "\t", typed=True, settings_beside=True),  # tabs: as VS Code writes
    "vscode-settings": JsonServers("vscode-settings", ("mcp", "servers")),  # read only
    "claude-code": JsonServers("claude-code", typed=True, extra=(("env", {}),), projects=True),  # as `claude mcp add`
    "windsurf": JsonServers("windsurf"),
    "gemini": JsonServers("gemini", allowlist=True),
    # Zed's documented entry has `"env": {}`
    "zed": JsonSwitched("zed", zed.SECTION, extra=(("env", {}),), key=zed.SWITCH[0], off=zed.SWITCH[1]),
    "cline": JsonSwitched("cline", cline.SECTION, key=cline.SWITCH[0], off=cline.SWITCH[1]),
    "copilot": JsonServers("copilot", typed=True, extra=(("tools", ["*"]),)),  # Copilot CLI: every tool
    "opencode": OpenCode("opencode"),
    "codex": Codex(),
    "goose": Goose(),
    "continue": Continue(),
    "continue-block": Continue(),  # read only
}


READ_ONLY: frozenset[Layout] = frozenset({"vscode-settings", "continue-block"})  # files install never writes


def dialect_of(layout: Layout) -> Dialect:
    """The layout's dialect (VS Code's settings.json and Continue's block files are only read: install
    never writes them)."""
    return DIALECTS[layout]
