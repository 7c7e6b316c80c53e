"""Each layout's dialect (`dialect.Dialect`), by the layout a row of the clients' table names."""

from __future__ import annotations

from mcpmanager.core.clients import cline, zed
from mcpmanager.core.clients.codex import Codex
from mcpmanager.core.clients.dialect import Dialect
from mcpmanager.core.clients.json_servers import JsonServers
from mcpmanager.core.clients.json_switched import JsonSwitched
from mcpmanager.core.clients.locations import Layout
from mcpmanager.core.clients.yaml_dialects import Continue, Goose

DIALECTS: dict[Layout, Dialect] = {
    "mcpServers": JsonServers("mcpServers"),
    "vscode": JsonServers("vscode", ("servers",), "\t"),  # as VS Code writes a new file
    "claude-code": JsonServers("claude-code"),
    "windsurf": JsonServers("windsurf"),
    "gemini": JsonServers("gemini"),
    "zed": JsonSwitched("zed", zed.SECTION, "  ", *zed.SWITCH, bridge_env=True),
    "cline": JsonSwitched("cline", cline.SECTION, "  ", *cline.SWITCH),
    "codex": Codex(),
    "goose": Goose(),
    "continue": Continue(),
}


def dialect_of(layout: Layout) -> Dialect:
    """The layout's dialect; KeyError for the files only read (VS Code's settings.json, Continue's blocks)."""
    return DIALECTS[layout]
