"""The one table of clients (`TABLE`): each client's key, label, the layout of the file it keeps its MCP
servers in, where that file is on Linux, macOS and Windows (it may not exist), and how the file keeps a
server off. The command line, the window, import, install and export all read it.

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

- GitHub Copilot CLI: `~/.copilot/mcp-config.json` everywhere, `$COPILOT_HOME/mcp-config.json` when
  that is set (its folder: github/copilot-cli#3000); `XDG_CONFIG_HOME` is not followed (the how-to
  page says it changes the location without saying to where; github/docs#40682 found it did not). An
  `mcpServers` object of typed entries with `tools`
  (https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers,
  https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference).
- OpenCode: `opencode.json` (or `opencode.jsonc`) in `$XDG_CONFIG_HOME/opencode/` (default
  `~/.config/opencode/`) on every platform, and the file `OPENCODE_CONFIG` names; its `mcp` object
  (`opencode.py`; https://opencode.ai/docs/config, https://opencode.ai/docs/mcp-servers).

`home` is the user's home folder; the environment is passed in, so every platform is tested anywhere.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# How a file keeps its servers: `mcpServers` (Claude Desktop, Cursor), VS Code's mcp.json and settings.json,
# Claude Code's user and project scopes, Windsurf's and Gemini CLI's `mcpServers` (their own remote-URL keys),
# Codex's TOML `[mcp_servers.NAME]` tables, Zed's `context_servers` (`zed.py`), Cline's `mcpServers` (`cline.py`),
# Goose's YAML `extensions`, Continue's YAML `mcpServers` list in config.yaml and in its block files (read only),
# Copilot CLI's `mcpServers` (typed entries with a tool list), OpenCode's `mcp` (a command as one list, `opencode.py`).
Layout = Literal[
    "mcpServers",
    "vscode",
    "vscode-settings",
    "claude-code",
    "windsurf",
    "gemini",
    "codex",
    "zed",
    "cline",
    "goose",
    "continue",
    "continue-block",
    "copilot",
    "opencode",
]


@dataclass(frozen=True)
class Folders:
    """The folders a client's place is worked out from: the home folder, the platform, the environment."""

    home: Path
    platform: str
    env: Mapping[str, str]

    def path(self, key: str) -> Path | None:
        return _env_path(self.env, key)

    @property
    def config_home(self) -> Path:
        """`$XDG_CONFIG_HOME`, else `~/.config` (read on macOS too by the clients that follow XDG)."""
        return self.path("XDG_CONFIG_HOME") or self.home / ".config"

    @property
    def app_data(self) -> Path:
        """Where desktop apps keep their settings: `%APPDATA%`, `~/Library/Application Support`, or XDG."""
        if self.platform == "win32":
            return self.path("APPDATA") or self.home / "AppData" / "Roaming"
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        return self.config_home


Place = tuple[str, Path, Layout]  # what tells it apart in its label ("" for none), the file, its layout


@dataclass(frozen=True)
class Client:
    """One row of the table."""

    key: str  # as the command line takes it: `--client KEY`
    label: str  # for people
    layout: Layout  # the layout of the file install and export write
    places: Callable[[Folders], list[Place]]
    writer: str  # the shape of the entries export writes (`export_entries.SHAPES`), by name: read lazily
    switch: str | None = None  # how its file keeps a server off (its own switch); None: none it honours
    in_sentence: bool = True  # named in `client_names` (VS Code Insiders is VS Code there)
    # A file in the home folder itself: the folder of the home that says the client ran (the home exists anyway).
    ran_folder: str | None = None


@dataclass(frozen=True)
class Location:
    """Where a client keeps its servers (the file may not exist)."""

    client: str
    label: str
    path: Path
    layout: Layout


def _claude_desktop(f: Folders) -> list[Place]:
    found: list[Place] = [("", f.app_data / "Claude" / "claude_desktop_config.json", "mcpServers")]
    packages = (f.path("LOCALAPPDATA") or f.home / "AppData" / "Local") / "Packages"
    if f.platform == "win32" and packages.is_dir():  # the Store (MSIX) build reads a virtualised copy
        for folder in sorted(p / "LocalCache" / "Roaming" / "Claude" for p in packages.glob("Claude_*")):
            found.append(("Microsoft Store", folder / "claude_desktop_config.json", "mcpServers"))
    return found


def _vscode(app: str) -> Callable[[Folders], list[Place]]:
    def places(f: Folders) -> list[Place]:
        user = f.app_data / app / "User"
        return [("", user / "mcp.json", "vscode"), ("settings.json", user / "settings.json", "vscode-settings")]

    return places


def _zed(f: Folders) -> list[Place]:
    if f.platform == "win32":
        folder = f.app_data / "Zed"
    else:  # macOS too: Zed's config_dir is ~/.config/zed there, not Library
        folder = (f.home / ".config" if f.platform == "darwin" else f.app_data) / "zed"
    return [("", folder / "settings.json", "zed")]


def _cline(f: Folders) -> list[Place]:
    """Cline's file, as its own path resolution has it: `CLINE_MCP_SETTINGS_PATH`, else
    `$CLINE_DATA_DIR/settings/`, else `$CLINE_DIR/data/settings/`, else `~/.cline/data/settings/`;
    then where the extension kept it before, in VS Code's (and Insiders') global storage."""
    data = f.path("CLINE_DATA_DIR") or (f.path("CLINE_DIR") or f.home / ".cline") / "data"
    main = f.path("CLINE_MCP_SETTINGS_PATH") or data / "settings" / "cline_mcp_settings.json"
    found: list[Place] = [("", main, "cline")]
    for app, host in (("Code", "VS Code"), ("Code - Insiders", "VS Code Insiders")):
        storage = f.app_data / app / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
        found.append((host, storage / "cline_mcp_settings.json", "cline"))
    return found


def _lm_studio(f: Folders) -> list[Place]:
    """LM Studio's folder: `~/.lmstudio`, or the folder `~/.lmstudio-home-pointer` names (LM Studio
    writes it; it points at `~/.cache/lm-studio` on older installs, or wherever the user moved it)."""
    try:
        pointed = (f.home / ".lmstudio-home-pointer").read_text(encoding="utf-8-sig").strip()
    except (OSError, UnicodeDecodeError):
        pointed = ""
    absolute = pointed and (Path(pointed).is_absolute() or re.match(r"[A-Za-z]:[\\/]", pointed))
    return [("", (Path(pointed) if absolute else f.home / ".lmstudio") / "mcp.json", "mcpServers")]


def _goose(f: Folders) -> list[Place]:
    root = f.path("GOOSE_PATH_ROOT")
    if root is not None:
        folder = root / "config"
    elif f.platform == "win32":
        folder = f.app_data / "Block" / "goose" / "config"  # %APPDATA%: Goose's app strategy on Windows
    else:
        folder = f.config_home / "goose"  # XDG on macOS too
    return [("", folder / "config.yaml", "goose")]


def _continue(f: Folders) -> list[Place]:
    folder = f.path("CONTINUE_GLOBAL_DIR") or f.home / ".continue"
    found: list[Place] = [("", folder / "config.yaml", "continue")]
    blocks = folder / "mcpServers"  # each block file Continue loads: read, never written
    for block in sorted(blocks.glob("*.y*ml")) if blocks.is_dir() else []:
        if block.suffix in (".yaml", ".yml"):
            found.append((f"mcpServers/{block.name}", block, "continue-block"))
    return found


def _opencode(f: Folders) -> list[Place]:
    """OpenCode's global file, `opencode.json` (or `opencode.jsonc` when only that one is there) in
    `$XDG_CONFIG_HOME/opencode/`, `~/.config/opencode/` on every platform; and the file
    `OPENCODE_CONFIG` names, a layer OpenCode reads after it."""
    folder = f.config_home / "opencode"
    name = (
        "opencode.jsonc" if (folder / "opencode.jsonc").is_file() and not (folder / "opencode.json").is_file() else ""
    )
    found: list[Place] = [("", folder / (name or "opencode.json"), "opencode")]
    custom = f.path("OPENCODE_CONFIG")
    if custom is not None:
        found.append(("OPENCODE_CONFIG", custom, "opencode"))
    return found


def _one(layout: Layout, where: Callable[[Folders], Path]) -> Callable[[Folders], list[Place]]:
    return lambda f: [("", where(f), layout)]


TABLE: tuple[Client, ...] = (
    Client("claude-desktop", "Claude Desktop", "mcpServers", _claude_desktop, "local-only"),
    Client("cursor", "Cursor", "mcpServers", _one("mcpServers", lambda f: f.home / ".cursor" / "mcp.json"), "url"),
    Client("vscode", "VS Code", "vscode", _vscode("Code"), "typed"),
    Client("vscode-insiders", "VS Code Insiders", "vscode", _vscode("Code - Insiders"), "typed", in_sentence=False),
    Client(
        "claude-code",
        "Claude Code",
        "claude-code",
        _one("claude-code", lambda f: (f.path("CLAUDE_CONFIG_DIR") or f.home) / ".claude.json"),
        "typed-env",
        ran_folder=".claude",
    ),
    Client(
        "windsurf",
        "Windsurf",
        "windsurf",
        _one("windsurf", lambda f: f.home / ".codeium" / "windsurf" / "mcp_config.json"),
        "server-url",
        switch='"disabled": true',
    ),
    Client(
        "gemini-cli",
        "Gemini CLI",
        "gemini",
        _one("gemini", lambda f: (f.path("GEMINI_CLI_HOME") or f.home) / ".gemini" / "settings.json"),
        "http-url",
    ),
    Client(
        "codex",
        "Codex",
        "codex",
        _one("codex", lambda f: (f.path("CODEX_HOME") or f.home / ".codex") / "config.toml"),
        "toml-table",
        switch="enabled = false",
    ),
    Client("zed", "Zed", "zed", _zed, "context-server", switch='"enabled": false'),
    Client("cline", "Cline", "cline", _cline, "transport-typed", switch='"disabled": true'),
    Client("lm-studio", "LM Studio", "mcpServers", _lm_studio, "http-only"),
    Client("goose", "Goose", "goose", _goose, "extension", switch="enabled: false"),
    Client("continue", "Continue", "continue", _continue, "list-item"),
    Client(
        "copilot-cli",
        "GitHub Copilot CLI",
        "copilot",
        _one("copilot", lambda f: (f.path("COPILOT_HOME") or f.home / ".copilot") / "mcp-config.json"),
        "typed-tools",
    ),
    Client(
        "opencode", "OpenCode", "opencode", _opencode, "local-remote", switch='"enabled": false (or "disabled": true)'
    ),
)
BY_KEY: dict[str, Client] = {client.key: client for client in TABLE}
CLIENTS: dict[str, str] = {client.key: client.label for client in TABLE}  # key → label


def client_names(joiner: str = "or") -> str:
    """The clients by name, for a sentence: "Claude Desktop, Cursor, … or Codex" (VS Code once)."""
    names = [client.label for client in TABLE if client.in_sentence]
    return f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def client_keys(joiner: str = "or") -> str:
    """The keys the command line takes, for its help: "claude-desktop, cursor, … or continue"."""
    keys = [client.key for client in TABLE]
    return f"{', '.join(keys[:-1])} {joiner} {keys[-1]}"


def client_locations(home: Path, platform: str = sys.platform, env: Mapping[str, str] = os.environ) -> list[Location]:
    """Every place a client's config may be on `platform`, existing or not, in the table's order."""
    folders = Folders(home, platform, env)
    return [
        Location(client.key, f"{client.label} ({qualifier})" if qualifier else client.label, path, layout)
        for client in TABLE
        for qualifier, path, layout in client.places(folders)
    ]


def _env_path(env: Mapping[str, str], key: str) -> Path | None:
    """An absolute folder from the environment (Windows names are case-insensitive)."""
    value = env.get(key) or next((v for k, v in env.items() if k.upper() == key), "")
    return Path(value) if value and (Path(value).is_absolute() or re.match(r"[A-Za-z]:[\\/]", value)) else None
