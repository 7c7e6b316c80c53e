"""Each layout's dialect (`dialect.Dialect`), by the layout a row of the clients' table names."""

from __future__ import annotations

from mcpmanager.core.clients import cline, opencode, own_keys, zed
from mcpmanager.core.clients.codex import Codex
from mcpmanager.core.clients.dialect import Dialect
from mcpmanager.core.clients.json_reading import Reading
from mcpmanager.core.clients.json_servers import JsonServers
from mcpmanager.core.clients.json_switched import JsonSwitched, OpenCode
from mcpmanager.core.clients.locations import Layout
from mcpmanager.core.clients.yaml_dialects import Continue, Goose

# What each JSON layout has of its own, for import (`json_reading.Reading`).
_VSCODE_SETTINGS = Reading(("mcp", "servers"), inputs=True)
_ZED = Reading(zed.SECTION, entry=zed.read_entry)
_CLINE = Reading(cline.SECTION, entry=cline.read_entry)

DIALECTS: dict[Layout, Dialect] = {
    "mcpServers": JsonServers("mcpServers"),
    # tabs: as VS Code writes
    "vscode": JsonServers(
        "vscode",
        ("servers",),
        "\t",
        typed=True,
        reading=Reading(("servers",), inputs=True),
        settings_beside=_VSCODE_SETTINGS,
    ),
    "vscode-settings": JsonServers("vscode-settings", ("mcp", "servers"), reading=_VSCODE_SETTINGS),  # read only
    # as `claude mcp add` writes it; `alwaysLoad`: its tools are never deferred behind Claude Code's tool search
    "claude-code": JsonServers(
        "claude-code", typed=True, extra=(("env", {}),), loaded=(("alwaysLoad", True),), reading=Reading(projects=True)
    ),
    "windsurf": JsonServers("windsurf", reading=Reading(entry=own_keys.windsurf_entry)),
    "gemini": JsonServers(
        "gemini", allowlist=True, reading=Reading(entry=own_keys.gemini_entry, env_variables=own_keys.GEMINI_VARIABLE)
    ),
    # Zed's documented entry has `"env": {}`
    "zed": JsonSwitched("zed", zed.SECTION, extra=(("env", {}),), reading=_ZED, key=zed.SWITCH[0], off=zed.SWITCH[1]),
    "cline": JsonSwitched("cline", cline.SECTION, reading=_CLINE, key=cline.SWITCH[0], off=cline.SWITCH[1]),
    # Copilot CLI: every tool; `deferTools: never`: never deferred behind its tool search
    "copilot": JsonServers(
        "copilot",
        typed=True,
        extra=(("tools", ["*"]),),
        loaded=(("deferTools", "never"),),
        reading=Reading(entry=own_keys.copilot_entry),
    ),
    "opencode": OpenCode(
        "opencode", reading=Reading(opencode.FLAT, section_of=opencode.section_of, entry=opencode.read_entry)
    ),
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
