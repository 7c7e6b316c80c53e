"""Reading the servers configured in Claude Desktop, Cursor, VS Code and Claude Code from sample files
laid out as on Linux, macOS and Windows (tests/fixtures/client_configs, each folder a fake home)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import ClientConfig, find_client_configs, read_client_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from tests.helpers.client_samples import SAMPLES

LINUX, MACOS, WINDOWS, BROKEN = (SAMPLES / name for name in ("linux", "macos", "windows", "broken"))
# Every token in the samples: none may ever appear in a problem line.
FAKE_SECRETS = [
    "ghp_FAKE0000000000000000000000000000linux",
    "ghp_FAKE000000000000000000000000000broken",
    "ctx7sk-FAKE-0000-cursor",
    "FAKE-docs-token-0000",
    "sk_test_FAKE0000000000000000",
    "FAKE-token-mytools",
    "FAKE-list-token",
]


def summary(configs: list[ClientConfig]) -> list[tuple[str, str, str, list[str]]]:
    return [(c.client, c.label, c.path.relative_to(SAMPLES).as_posix(), [s.name for s in c.servers]) for c in configs]


def problems(config: ClientConfig) -> list[str]:
    """Problem lines with the samples folder cut off the front (the lines name the whole path)."""
    prefix = f"{config.path}"
    assert all(p.startswith(prefix) for p in config.problems), config.problems
    return [p[len(prefix) :] for p in config.problems]


def by_label(configs: list[ClientConfig], label: str) -> ClientConfig:
    return next(c for c in configs if c.label == label)


# Where each client keeps its file, per platform -----------------------------------------------------


def test_linux_layout() -> None:
    found = find_client_configs(LINUX, "linux", {})
    assert summary(found) == [
        (
            "claude-desktop",
            "Claude Desktop",
            "linux/.config/Claude/claude_desktop_config.json",
            ["filesystem", "github", "memory"],
        ),
        ("cursor", "Cursor", "linux/.cursor/mcp.json", ["time", "context7", "sentry", "linear", "notion"]),
        (
            "vscode",
            "VS Code",
            "linux/.config/Code/User/mcp.json",
            ["github", "perplexity", "playwright", "fetch", "everything"],
        ),
        ("vscode", "VS Code (settings.json)", "linux/.config/Code/User/settings.json", ["sqlite", "memory"]),
        ("claude-code", "Claude Code", "linux/.claude.json", ["git", "docs", "postgres", "postgres-api", "docs-api"]),
    ]


def test_macos_layout() -> None:
    found = find_client_configs(MACOS, "darwin", {})
    assert summary(found) == [
        (
            "claude-desktop",
            "Claude Desktop",
            "macos/Library/Application Support/Claude/claude_desktop_config.json",
            ["filesystem", "time"],
        ),
        ("cursor", "Cursor", "macos/.cursor/mcp.json", ["stripe"]),
        ("vscode", "VS Code", "macos/Library/Application Support/Code/User/mcp.json", ["git"]),
        ("claude-code", "Claude Code", "macos/.claude.json", ["sequential-thinking"]),
    ]
    assert all(c.problems == [] for c in found)
    # The same home read as Linux finds only what is at the same place on both.
    assert [c.client for c in find_client_configs(MACOS, "linux", {})] == ["cursor", "claude-code"]


WINDOWS_FOUND = [
    ("claude-desktop", "Claude Desktop", "windows/AppData/Roaming/Claude/claude_desktop_config.json", ["filesystem"]),
    (
        "claude-desktop",
        "Claude Desktop (Microsoft Store)",
        "windows/AppData/Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json",
        ["everything"],
    ),
    ("cursor", "Cursor", "windows/.cursor/mcp.json", ["browser-tools"]),
    ("vscode", "VS Code (settings.json)", "windows/AppData/Roaming/Code/User/settings.json", ["fetch"]),
    ("claude-code", "Claude Code", "windows/.claude.json", ["db", "db-blog"]),
]


def test_windows_layout_with_and_without_appdata_in_the_environment() -> None:
    assert summary(find_client_configs(WINDOWS, "win32", {})) == WINDOWS_FOUND
    env = {"APPDATA": str(WINDOWS / "AppData" / "Roaming"), "LOCALAPPDATA": str(WINDOWS / "AppData" / "Local")}
    assert summary(find_client_configs(WINDOWS, "win32", env)) == WINDOWS_FOUND
    # Windows environment names are case-insensitive.
    lower = {"appdata": env["APPDATA"], "localappdata": env["LOCALAPPDATA"]}
    assert summary(find_client_configs(WINDOWS, "win32", lower)) == WINDOWS_FOUND


def test_windows_appdata_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(WINDOWS, home)
    roaming = tmp_path / "Roaming"
    shutil.move(home / "AppData" / "Roaming", roaming)
    found = find_client_configs(home, "win32", {"APPDATA": str(roaming)})
    assert [(c.label, c.path) for c in found][:2] == [
        ("Claude Desktop", roaming / "Claude" / "claude_desktop_config.json"),
        (
            "Claude Desktop (Microsoft Store)",
            home / "AppData/Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json",
        ),
    ]
    assert len(found) == 5


def test_xdg_config_home_and_claude_config_dir(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(LINUX / ".config"), "CLAUDE_CONFIG_DIR": str(MACOS)}
    found = find_client_configs(tmp_path, "linux", env)
    assert [(c.label, c.path) for c in found] == [
        ("Claude Desktop", LINUX / ".config/Claude/claude_desktop_config.json"),
        ("VS Code", LINUX / ".config/Code/User/mcp.json"),
        ("VS Code (settings.json)", LINUX / ".config/Code/User/settings.json"),
        ("Claude Code", MACOS / ".claude.json"),
    ]
    # A relative XDG_CONFIG_HOME is invalid by the spec: ~/.config is used.
    assert find_client_configs(tmp_path, "linux", {"XDG_CONFIG_HOME": "relative/dir"}) == []


def test_every_location_is_listed_even_when_absent(tmp_path: Path) -> None:
    assert find_client_configs(tmp_path, "linux", {}) == []
    places = [
        (w.client, w.path.relative_to(tmp_path).as_posix(), w.layout) for w in client_locations(tmp_path, "linux", {})
    ]
    assert places == [
        ("claude-desktop", ".config/Claude/claude_desktop_config.json", "mcpServers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("vscode", ".config/Code/User/mcp.json", "vscode"),
        ("vscode", ".config/Code/User/settings.json", "vscode-settings"),
        ("vscode-insiders", ".config/Code - Insiders/User/mcp.json", "vscode"),
        ("vscode-insiders", ".config/Code - Insiders/User/settings.json", "vscode-settings"),
        ("claude-code", ".claude.json", "claude-code"),
        ("windsurf", ".codeium/windsurf/mcp_config.json", "windsurf"),
        ("gemini-cli", ".gemini/settings.json", "gemini"),
        ("codex", ".codex/config.toml", "codex"),
        ("zed", ".config/zed/settings.json", "zed"),
        ("cline", ".cline/data/settings/cline_mcp_settings.json", "cline"),
        ("cline", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "cline"),
        (
            "cline",
            ".config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            "cline",
        ),
        ("lm-studio", ".lmstudio/mcp.json", "mcpServers"),
        ("goose", ".config/goose/config.yaml", "goose"),
        ("continue", ".continue/config.yaml", "continue"),
        ("copilot-cli", ".copilot/mcp-config.json", "copilot"),
        ("opencode", ".config/opencode/opencode.json", "opencode"),
    ]


# The formats, read faithfully -----------------------------------------------------------------------


def test_claude_desktop_servers_in_full() -> None:
    claude = by_label(find_client_configs(LINUX, "linux", {}), "Claude Desktop")
    assert claude.servers == [
        StdioServerConfig(
            "filesystem",
            "npx",
            ["-y", "@modelcontextprotocol/server-filesystem", "/home/alice/Documents", "/home/alice/Downloads"],
        ),
        StdioServerConfig(
            "github",
            "npx",
            ["-y", "@modelcontextprotocol/server-github"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE0000000000000000000000000000linux"},
        ),
        StdioServerConfig(
            "memory",
            "npx",
            ["-y", "@modelcontextprotocol/server-memory"],
            {"MEMORY_FILE_PATH": "/home/alice/.local/share/claude-memory.json"},
            disabled=True,
        ),
    ]
    assert claude.problems == []


def test_cursor_remote_servers_disabled_and_variables() -> None:
    found = find_client_configs(LINUX, "linux", {})
    cursor = by_label(found, "Cursor")
    assert cursor.servers[1:3] == [
        HttpServerConfig("context7", "https://mcp.context7.com/mcp", {"CONTEXT7_API_KEY": "ctx7sk-FAKE-0000-cursor"}),
        HttpServerConfig("sentry", "https://mcp.sentry.dev/sse", transport="sse"),
    ]
    linear = cursor.servers[3]
    assert isinstance(linear, StdioServerConfig) and linear.env == {"LINEAR_API_KEY": "${env:LINEAR_API_KEY}"}
    assert problems(cursor) == [
        ":15:15: mcpServers.linear: uses ${env:LINEAR_API_KEY}: left as written (mcpmanager does not expand them)",
        ":23:18: mcpServers.notion.envFile: uses a variable only the client can resolve; not read "
        "(add its variables to env)",
    ]
    stripe = find_client_configs(MACOS, "darwin", {})[1].servers[0]
    assert stripe.disabled


def test_vscode_inputs_env_file_and_numbers() -> None:
    vscode = by_label(find_client_configs(LINUX, "linux", {}), "VS Code")
    github, perplexity, playwright, fetch, everything = vscode.servers
    # Imported as written: the input is for the user to fill in.
    assert github == HttpServerConfig(
        "github", "https://api.githubcopilot.com/mcp/", {"Authorization": "Bearer ${input:github-token}"}
    )
    assert isinstance(perplexity, StdioServerConfig)
    assert perplexity.env == {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}
    # envFile (${userHome} resolved) read; `env` wins over it; a number became a string.
    assert fetch == StdioServerConfig(
        "fetch",
        "uvx",
        ["mcp-server-fetch"],
        {
            "HTTPS_PROXY": "http://proxy.example.invalid:3128",
            "USER_AGENT": "ModelContextProtocol/1.0 (User-Specified)",
            "FETCH_TIMEOUT": "30",
        },
    )
    assert playwright == StdioServerConfig("playwright", "npx", ["@playwright/mcp@latest", "--headless"])
    assert everything == StdioServerConfig(
        "everything", "npx", ["-y", "@modelcontextprotocol/server-everything", "stdio"]
    )  # its "dev" key ignored
    assert problems(vscode) == [
        ":17:13: servers.github: needs input 'github-token' (GitHub Personal Access Token), which the client asks "
        "for when it starts the server; imported as written: enter the value in mcpmanager",
        ":24:17: servers.perplexity: needs input 'perplexity-key' (Perplexity API Key), which the client asks "
        "for when it starts the server; imported as written: enter the value in mcpmanager",
    ]


def test_vscode_settings_json_is_jsonc() -> None:
    settings = by_label(find_client_configs(LINUX, "linux", {}), "VS Code (settings.json)")
    assert settings.servers == [
        StdioServerConfig("sqlite", "uvx", ["mcp-server-sqlite", "--db-path", "${userHome}/data/test.db"]),
        StdioServerConfig("memory", "npx", ["-y", "@modelcontextprotocol/server-memory"]),
    ]
    assert problems(settings) == [
        ":13:23: mcp.servers.sqlite: uses ${userHome}: left as written (mcpmanager does not expand them)"
    ]
    # Windows: a byte-order mark, CRLF line ends, comments and trailing commas.
    windows = by_label(find_client_configs(WINDOWS, "win32", {}), "VS Code (settings.json)")
    assert windows.servers == [StdioServerConfig("fetch", "uvx.exe", ["mcp-server-fetch"])]
    assert windows.problems == []


def test_claude_code_scopes_user_first_then_projects() -> None:
    claude_code = by_label(find_client_configs(LINUX, "linux", {}), "Claude Code")
    git, docs, postgres, postgres_api, docs_api = claude_code.servers
    assert git == StdioServerConfig("git", "uvx", ["mcp-server-git"])  # also in webapp, identical: once
    assert docs == HttpServerConfig(
        "docs", "https://docs.example.invalid/mcp", {"Authorization": "Bearer FAKE-docs-token-0000"}
    )
    assert isinstance(postgres, StdioServerConfig) and postgres.args[-1] == "postgresql://localhost/webapp"
    assert isinstance(postgres_api, StdioServerConfig) and postgres_api.args[-1] == "postgresql://localhost/api"
    assert docs_api == HttpServerConfig("docs-api", "https://docs.example.invalid/sse", transport="sse")
    assert problems(claude_code) == [
        ":45:9: projects[\"/home/alice/src/api\"].mcpServers.postgres: another 'postgres' is configured already; "
        "imported as 'postgres-api'",
        ":51:9: projects[\"/home/alice/src/api\"].mcpServers.docs: another 'docs' is configured already; "
        "imported as 'docs-api'",
    ]
    # Windows project paths: the folder name after the last separator.
    windows = by_label(find_client_configs(WINDOWS, "win32", {}), "Claude Code")
    assert problems(windows) == [
        ":11:9: projects[\"C:/Users/alice/src/blog\"].mcpServers.db: another 'db' is configured already; "
        "imported as 'db-blog'"
    ]


# What cannot be read --------------------------------------------------------------------------------


def test_broken_files_each_give_problems_and_never_raise() -> None:
    found = find_client_configs(BROKEN, "linux", {})
    assert summary(found) == [
        ("claude-desktop", "Claude Desktop", "broken/.config/Claude/claude_desktop_config.json", []),
        ("cursor", "Cursor", "broken/.cursor/mcp.json", []),
        (
            "vscode",
            "VS Code",
            "broken/.config/Code/User/mcp.json",
            ["good", "My-Tools", "twice", "undeclared", "missing-env-file", "relative-env-file"],
        ),
        ("vscode", "VS Code (settings.json)", "broken/.config/Code/User/settings.json", []),
        (
            "vscode-insiders",
            "VS Code Insiders (settings.json)",
            "broken/.config/Code - Insiders/User/settings.json",
            [],
        ),
        ("claude-code", "Claude Code", "broken/.claude.json", ["fine"]),
    ]
    claude, cursor, vscode, empty, insiders, claude_code = found
    assert problems(claude) == [":6:7: invalid JSON: Expecting ',' delimiter"]
    assert problems(cursor) == [": expected a JSON object at the top level, got array"]
    assert problems(empty) == []  # VS Code starts with an empty settings.json
    assert problems(insiders) == [": not UTF-8 text (bad byte at offset 42)"]
    assert problems(claude_code) == [":2:17: mcpServers: expected an object of servers, got array"]
    assert problems(vscode) == [
        ":10:3: servers.twice: written twice; the last one is read (as the client does)",
        ":4:65: servers.numbers.args[1]: expected a string, got number (server 'numbers' not imported)",
        ":5:34: servers.ftp.url: expected an http:// or https:// URL (server 'ftp' not imported)",
        ":6:14: servers.nothing: type 'stdio' needs \"command\" (server 'nothing' not imported)",
        ":7:25: servers.websocket.type: unknown server type 'ws' (expected stdio, http or sse) "
        "(server 'websocket' not imported)",
        ':8:94: servers["My Tools"].env.UNSET_ME: null (unset the variable) is not supported here; left out',
        ":8:3: servers[\"My Tools\"]: not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        "imported as 'My-Tools'",
        ":11:17: servers.undeclared: needs input 'missing-key' (not declared in inputs), which the client asks "
        "for when it starts the server; imported as written: enter the value in mcpmanager",
        ":12:53: servers.missing-env-file.envFile: cannot read /nonexistent/fake.env: No such file or directory",
        ":13:54: servers.relative-env-file.envFile: a relative path: the client resolves it from where it runs; "
        "not read",
        ":14:102: servers.header-list.headers.Authorization: expected a string, got array "
        "(server 'header-list' not imported)",
        ":15:20: servers.not-an-object: expected an object, got string (server 'not-an-object' not imported)",
    ]
    my_tools, twice = vscode.servers[1:3]
    assert isinstance(my_tools, StdioServerConfig)
    assert my_tools.env == {"API_TOKEN": "FAKE-token-mytools", "DEBUG": "true"}
    assert isinstance(twice, StdioServerConfig) and twice.command == "second"


def test_no_problem_line_shows_a_secret() -> None:
    lines = [
        line
        for home, platform in ((LINUX, "linux"), (MACOS, "darwin"), (WINDOWS, "win32"), (BROKEN, "linux"))
        for config in find_client_configs(home, platform, {})
        for line in config.problems
    ]
    assert len(lines) > 15
    assert not [line for line in lines if any(secret in line for secret in FAKE_SECRETS)]
    assert all("\n" not in line for line in lines)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("layout", "text", "expected"),
    [
        ("vscode-settings", '{"mcp": 5}', ":1:9: mcp: expected an object, got number"),
        ("vscode", '{"servers": []}', ":1:13: servers: expected an object of servers, got array"),
        ("claude-code", '{"projects": []}', ":1:14: projects: expected an object, got array"),
        ("mcpServers", '{"mcpServers": {"a": {"command": "x"}', ":1:38: invalid JSON: Expecting ',' delimiter"),
        ("mcpServers", "[1, 2]", ": expected a JSON object at the top level, got array"),
    ],
)
def test_one_problem_for_a_file_that_does_not_read(tmp_path: Path, layout: str, text: str, expected: str) -> None:
    path = write(tmp_path / "file.json", text)
    config = read_client_config("x", path, layout, home=tmp_path)  # type: ignore[arg-type]
    assert config.servers == []
    assert problems(config) == [expected]


def test_empty_files_and_sections_are_no_servers_and_no_problem(tmp_path: Path) -> None:
    for text in ("", "  \n", "{}", '{"mcpServers": {}}', "// only a comment\n{}"):
        config = read_client_config("cursor", write(tmp_path / "mcp.json", text), "mcpServers", home=tmp_path)
        assert (config.servers, config.problems, config.label) == ([], [], "Cursor")


def test_env_file_under_the_home_folder(tmp_path: Path) -> None:
    write(tmp_path / ".secrets" / "tool.env", 'A=1\n\n# comment\nexport B = "two words"\nnot a pair\nC=\n')
    entry = {"command": "tool", "envFile": "~/.secrets/tool.env", "env": {"B": "mine"}}
    path = write(tmp_path / ".cursor" / "mcp.json", json.dumps({"mcpServers": {"tool": entry}}, indent=1))
    config = read_client_config("cursor", path, "mcpServers", home=tmp_path)
    assert config.servers == [StdioServerConfig("tool", "tool", env={"A": "1", "B": "mine", "C": ""})]
    assert problems(config) == [
        f":5:15: mcpServers.tool.envFile: {tmp_path}/.secrets/tool.env line 5 is not KEY=VALUE; skipped"
    ]


def test_unusable_names_get_unique_usable_ones(tmp_path: Path) -> None:
    servers = {
        "My Tools": {"command": "a"},
        "My-Tools": {"command": "b"},
        "ünï": {"command": "c"},
        "-x": {"command": "d"},
    }
    path = write(tmp_path / "mcp.json", json.dumps({"mcpServers": servers}))
    config = read_client_config("cursor", path, "mcpServers", home=tmp_path)
    assert [(s.name, s.command) for s in config.servers if isinstance(s, StdioServerConfig)] == [
        ("My-Tools-2", "a"),
        ("My-Tools", "b"),
        ("n", "c"),
        ("x", "d"),
    ]
    assert problems(config)[0] == (
        ":1:17: mcpServers[\"My Tools\"]: not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        "imported as 'My-Tools-2'"
    )
    assert len(config.problems) == 3
