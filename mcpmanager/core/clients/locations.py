"""Where each client keeps its MCP servers, on Linux, macOS and Windows (the files may not exist).

- Claude Desktop: `claude_desktop_config.json` in `$XDG_CONFIG_HOME/Claude/` (default `~/.config`) on
  Linux, `~/Library/Application Support/Claude/` on macOS, `%APPDATA%\\Claude\\` on Windows, and for
  the Store (MSIX) build on Windows `%LOCALAPPDATA%\\Packages\\Claude_*\\LocalCache\\Roaming\\Claude\\`
  (the app reads that virtualised copy, not the other).
- Cursor: `~/.cursor/mcp.json` everywhere.
- VS Code and VS Code Insiders: `mcp.json` and the `"mcp"` section of `settings.json` in the `User`
  folder: `$XDG_CONFIG_HOME/Code/User/`, `~/Library/Application Support/Code/User/`,
  `%APPDATA%\\Code\\User\\` (Insiders: `Code - Insiders`).
- Claude Code: `~/.claude.json` everywhere (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set).
- Windsurf: `~/.codeium/windsurf/mcp_config.json` everywhere (`%USERPROFILE%\\.codeium\\windsurf\\` on
  Windows), an `mcpServers` object; a remote server has `serverUrl` (or `url`) instead of `command`,
  over Streamable HTTP or SSE, and `${env:VAR}` is interpolated in command, args, env, serverUrl, url
  and headers (https://docs.windsurf.com/windsurf/cascade/mcp).
- Gemini CLI: the user settings `~/.gemini/settings.json` everywhere (`$GEMINI_CLI_HOME/.gemini/` when
  that is set: Gemini CLI takes it for the home folder), a file of every other setting too, with an
  `mcpServers` object: `command` (stdio), `httpUrl` (Streamable HTTP) or `url` (SSE; newer versions
  also read `type`), and `headers`, `env`, `cwd`, `timeout`, `trust`, `includeTools`, `excludeTools`;
  `httpUrl` comes first, then `url`, then `command`
  (https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md,
  https://geminicli.com/docs/tools/mcp-server/).
- Codex (OpenAI's Codex CLI, its IDE extension and app share it): `~/.codex/config.toml` everywhere
  (`%USERPROFILE%\\.codex\\` on Windows), `$CODEX_HOME/config.toml` when `CODEX_HOME` is set (Codex's
  home folder, `~/.codex` by default), a TOML file of every other setting too (`model`,
  `approval_policy`, `[profiles.NAME]`…) with one `[mcp_servers.NAME]` table per server: `command`,
  `args`, `env`, `env_vars`, `cwd` (stdio) or `url` (Streamable HTTP), `bearer_token_env_var`,
  `http_headers`, `env_http_headers`, and `startup_timeout_sec`, `tool_timeout_sec`, `enabled`
  (false: off, kept), `required`, `enabled_tools`, `disabled_tools`. A trusted project's
  `.codex/config.toml` is a layer of the project, not the user's: not read
  (https://developers.openai.com/codex/mcp, https://developers.openai.com/codex/config-basic,
  https://developers.openai.com/codex/config-reference; openai/codex `docs/config.md`).
- Zed: its user `settings.json` (JSONC, every other Zed setting too) in `$XDG_CONFIG_HOME/zed/`
  (default `~/.config/zed/`) on Linux, `~/.config/zed/` on macOS too (not `Library`), `%APPDATA%\\Zed\\`
  on Windows (Zed's `paths::config_dir`); servers in `context_servers` (`zed.py`;
  https://zed.dev/docs/ai/mcp).
- Cline: `~/.cline/data/settings/cline_mcp_settings.json` everywhere, shared by the VS Code
  extension, the CLI and the SDK (`$CLINE_MCP_SETTINGS_PATH`, `$CLINE_DATA_DIR/settings/` or
  `$CLINE_DIR/data/settings/` when set; https://docs.cline.bot/getting-started/config); and where
  the extension kept it before, in VS Code's (and Insiders') `User/globalStorage/saoudrizwan.claude-dev/
  settings/` (https://docs.cline.bot/mcp/configuring-mcp-servers). An `mcpServers` object (`cline.py`).
- LM Studio: `~/.lmstudio/mcp.json` everywhere (`%USERPROFILE%\\.lmstudio\\` on Windows), or `mcp.json`
  in the folder `~/.lmstudio-home-pointer` names when LM Studio's data was moved; Cursor's `mcpServers`
  notation (https://lmstudio.ai/docs/app/mcp, lmstudio-ai/lmstudio-bug-tracker#1371 and #553).
- Goose: `config.yaml` in Goose's config folder: `$XDG_CONFIG_HOME/goose/` (default `~/.config/goose/`)
  on Linux and macOS, `%APPDATA%\\Block\\goose\\config\\` on Windows, `$GOOSE_PATH_ROOT/config/` when that
  is set; a YAML file of every other setting too, with an `extensions` mapping (`goose.py`;
  https://block.github.io/goose/docs/guides/config-files).
- Continue: `~/.continue/config.yaml` everywhere (`%USERPROFILE%\\.continue\\` on Windows,
  `$CONTINUE_GLOBAL_DIR` when set), an `mcpServers` list, and the YAML block files in
  `~/.continue/mcpServers/`, read only (`continue_yaml.py`; https://docs.continue.dev/customize/deep-dives/mcp).

`home` is the user's home folder; the environment is passed in, so every platform is tested anywhere.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# How a file keeps its servers: `mcpServers` (Claude Desktop, Cursor), VS Code's mcp.json and settings.json,
# Claude Code's user and project scopes, Windsurf's and Gemini CLI's `mcpServers` (their own remote-URL keys),
# Codex's TOML `[mcp_servers.NAME]` tables, Zed's `context_servers` (`zed.py`), Cline's `mcpServers` (`cline.py`),
# Goose's YAML `extensions`, Continue's YAML `mcpServers` list in config.yaml and in its block files (read only).
_YAML = Literal["goose", "continue", "continue-block"]
Layout = Literal[
    "mcpServers", "vscode", "vscode-settings", "claude-code", "windsurf", "gemini", "codex", "zed", "cline", _YAML
]


CLIENTS = {
    "claude-desktop": "Claude Desktop",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "vscode-insiders": "VS Code Insiders",
    "claude-code": "Claude Code",
    "windsurf": "Windsurf",
    "gemini-cli": "Gemini CLI",
    "codex": "Codex",
    "zed": "Zed",
    "cline": "Cline",
    "lm-studio": "LM Studio",
    "goose": "Goose",
    "continue": "Continue",
}


def client_names(joiner: str = "or") -> str:
    """The clients by name, for a sentence: "Claude Desktop, Cursor, … or Codex" (VS Code once)."""
    names = list(dict.fromkeys(label for key, label in CLIENTS.items() if key != "vscode-insiders"))
    return f"{', '.join(names[:-1])} {joiner} {names[-1]}"


@dataclass(frozen=True)
class Location:
    """Where a client keeps its servers (the file may not exist)."""

    client: str
    label: str
    path: Path
    layout: Layout


def client_locations(home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ) -> list[Location]:
    """Every place a client's config may be on `platform`, existing or not."""
    found: list[Location] = []
    if platform == "win32":
        appdata = _env_path(env, "APPDATA") or home / "AppData" / "Roaming"
        local = _env_path(env, "LOCALAPPDATA") or home / "AppData" / "Local"
        claude, code_base = [appdata / "Claude"], appdata
        # The Store (MSIX) build reads a virtualised copy; the package suffix is the publisher's hash.
        packages = local / "Packages"
        if packages.is_dir():
            claude += sorted(p / "LocalCache" / "Roaming" / "Claude" for p in packages.glob("Claude_*"))
    elif platform == "darwin":
        support = home / "Library" / "Application Support"
        claude, code_base = [support / "Claude"], support
    else:
        config_home = _env_path(env, "XDG_CONFIG_HOME") or home / ".config"
        claude, code_base = [config_home / "Claude"], config_home
    for i, folder in enumerate(claude):
        label = CLIENTS["claude-desktop"] + (" (Microsoft Store)" if i else "")
        found.append(Location("claude-desktop", label, folder / "claude_desktop_config.json", "mcpServers"))
    found.append(Location("cursor", CLIENTS["cursor"], home / ".cursor" / "mcp.json", "mcpServers"))
    for client, app in (("vscode", "Code"), ("vscode-insiders", "Code - Insiders")):
        user = code_base / app / "User"
        found.append(Location(client, CLIENTS[client], user / "mcp.json", "vscode"))
        found.append(Location(client, f"{CLIENTS[client]} (settings.json)", user / "settings.json", "vscode-settings"))
    claude_code = _env_path(env, "CLAUDE_CONFIG_DIR") or home
    found.append(Location("claude-code", CLIENTS["claude-code"], claude_code / ".claude.json", "claude-code"))
    windsurf = home / ".codeium" / "windsurf" / "mcp_config.json"
    found.append(Location("windsurf", CLIENTS["windsurf"], windsurf, "windsurf"))
    gemini = (_env_path(env, "GEMINI_CLI_HOME") or home) / ".gemini" / "settings.json"
    found.append(Location("gemini-cli", CLIENTS["gemini-cli"], gemini, "gemini"))
    codex = (_env_path(env, "CODEX_HOME") or home / ".codex") / "config.toml"
    found.append(Location("codex", CLIENTS["codex"], codex, "codex"))
    zed_base = home / ".config" if platform == "darwin" else code_base  # macOS too: Zed's config_dir
    zed = code_base / "Zed" if platform == "win32" else zed_base / "zed"
    found.append(Location("zed", CLIENTS["zed"], zed / "settings.json", "zed"))
    found.append(Location("cline", CLIENTS["cline"], _cline_settings(home, env), "cline"))
    for app, host in (("Code", "VS Code"), ("Code - Insiders", "VS Code Insiders")):  # Cline's earlier place
        storage = code_base / app / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
        found.append(Location("cline", f"{CLIENTS['cline']} ({host})", storage / "cline_mcp_settings.json", "cline"))
    found.append(Location("lm-studio", CLIENTS["lm-studio"], _lm_studio_home(home) / "mcp.json", "mcpServers"))
    goose_root = _env_path(env, "GOOSE_PATH_ROOT")
    if goose_root is not None:
        goose = goose_root / "config"
    elif platform == "win32":
        goose = code_base / "Block" / "goose" / "config"  # %APPDATA%: Goose's app strategy on Windows
    else:
        goose = (_env_path(env, "XDG_CONFIG_HOME") or home / ".config") / "goose"  # XDG on macOS too
    found.append(Location("goose", CLIENTS["goose"], goose / "config.yaml", "goose"))
    continue_home = _env_path(env, "CONTINUE_GLOBAL_DIR") or home / ".continue"
    found.append(Location("continue", CLIENTS["continue"], continue_home / "config.yaml", "continue"))
    blocks = continue_home / "mcpServers"  # each block file Continue loads: read, never written
    for block in sorted(blocks.glob("*.y*ml")) if blocks.is_dir() else []:
        if block.suffix in (".yaml", ".yml"):
            label = f"{CLIENTS['continue']} (mcpServers/{block.name})"
            found.append(Location("continue", label, block, "continue-block"))
    return found


def _cline_settings(home: Path, env: Mapping[str, str]) -> Path:
    """Cline's file, as its own path resolution has it: `CLINE_MCP_SETTINGS_PATH`, else
    `$CLINE_DATA_DIR/settings/`, else `$CLINE_DIR/data/settings/`, else `~/.cline/data/settings/`."""
    explicit = _env_path(env, "CLINE_MCP_SETTINGS_PATH")
    if explicit is not None:
        return explicit
    data = _env_path(env, "CLINE_DATA_DIR") or (_env_path(env, "CLINE_DIR") or home / ".cline") / "data"
    return data / "settings" / "cline_mcp_settings.json"


def _lm_studio_home(home: Path) -> Path:
    """LM Studio's folder: `~/.lmstudio`, or the folder `~/.lmstudio-home-pointer` names (LM Studio
    writes it; it points at `~/.cache/lm-studio` on older installs, or wherever the user moved it)."""
    try:
        pointed = (home / ".lmstudio-home-pointer").read_text(encoding="utf-8-sig").strip()
    except (OSError, UnicodeDecodeError):
        pointed = ""
    absolute = pointed and (Path(pointed).is_absolute() or re.match(r"[A-Za-z]:[\\/]", pointed))
    return Path(pointed) if absolute else home / ".lmstudio"


def _env_path(env: Mapping[str, str], key: str) -> Path | None:
    """An absolute folder from the environment (Windows names are case-insensitive)."""
    value = env.get(key) or next((v for k, v in env.items() if k.upper() == key), "")
    return Path(value) if value and (Path(value).is_absolute() or re.match(r"[A-Za-z]:[\\/]", value)) else None
