"""Config load/validate/save and file locations."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.config.load import load_config, parse_config
from mcpmanager.core.config.model import Config, ConfigError
from mcpmanager.core.config.save import save_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from mcpmanager.core.config.settings import ProxySettings, SupervisorSettings, ToolSettings
from mcpmanager.core.system.paths import Paths

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")

# As the MCP quickstart tells Claude Desktop users to write it.
CLAUDE_DESKTOP = """{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop",
        "/Users/username/Downloads"
      ]
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"
      }
    },
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "/Users/YOUR_USERNAME/test.db"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
"""


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# Loading ------------------------------------------------------------------------------------------


def test_pasted_claude_desktop_config_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(CLAUDE_DESKTOP, encoding="utf-8")
    config = load_config(path)
    assert list(config.servers) == ["filesystem", "github", "sqlite"]
    assert config.servers["github"] == StdioServerConfig(
        "github",
        "npx",
        ["-y", "@modelcontextprotocol/server-github"],
        {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"},
    )
    assert config.servers["sqlite"].name == "sqlite"
    assert [s.name for s in config.enabled_servers()] == ["filesystem", "github", "sqlite"]
    assert config.document["globalShortcut"] == "Ctrl+Space"


def test_missing_file_is_an_empty_default_config_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert load_config(path) == Config()
    assert not path.exists()


def test_defaults() -> None:
    config = parse_config("{}", "c.json")
    assert config == Config()
    assert config.servers == {} and config.tools == {} and config.synonyms == {}
    assert config.proxy == ProxySettings(mode="discovery", port=0, max_name_length=64)
    assert config.supervisor == SupervisorSettings(
        start_timeout=30.0,
        call_timeout=300.0,
        starting_wait=30.0,
        backoff_initial=1.0,
        backoff_max=60.0,
        crash_limit=5,
        crash_window=60.0,
        healthy_after=300.0,
        stop_grace=2.0,
        log_max_bytes=1048576,
        ring_lines=2000,
    )


def test_all_sections_are_read() -> None:
    config = parse_config(
        json.dumps(
            {
                "mcpServers": {"a": {"command": "x", "cwd": "/tmp", "disabled": True, "startTimeout": 5}},
                "tools": {"a:t": {"alwaysOn": True, "aliases": ["u"], "disabled": True, "params": {"p": "q"}}},
                "synonyms": {"pr": ["pull", "request"]},
                "proxy": {"mode": "direct", "port": 8765, "maxNameLength": 16},
                "supervisor": {"backoffInitial": 0.2, "crashLimit": 3, "ringLines": 10},
            }
        ),
        "c.json",
    )
    assert config.servers["a"] == StdioServerConfig("a", "x", cwd="/tmp", disabled=True, start_timeout=5.0)
    assert config.enabled_servers() == []
    assert config.tools == {"a:t": ToolSettings(always_on=True, aliases=["u"], disabled=True, params={"p": "q"})}
    assert config.synonyms == {"pr": ["pull", "request"]}
    assert config.proxy == ProxySettings("direct", 8765, 16)
    assert config.supervisor == SupervisorSettings(backoff_initial=0.2, crash_limit=3, ring_lines=10)
    assert isinstance(config.supervisor.start_timeout, float)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"command": "x"}, StdioServerConfig("s", "x")),
        ({"type": "stdio", "command": "x"}, StdioServerConfig("s", "x")),
        ({"url": "https://h/mcp"}, HttpServerConfig("s", "https://h/mcp")),
        ({"type": "http", "url": "https://h/mcp"}, HttpServerConfig("s", "https://h/mcp")),
        ({"type": "streamable-http", "url": "http://h/mcp"}, HttpServerConfig("s", "http://h/mcp")),
        ({"type": "streamableHttp", "url": "http://h/mcp"}, HttpServerConfig("s", "http://h/mcp")),
        ({"type": "sse", "url": "http://h/sse"}, HttpServerConfig("s", "http://h/sse", transport="sse")),
        (
            {"url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}, "startTimeout": 2.5},
            HttpServerConfig("s", "https://h/mcp", {"Authorization": "Bearer t"}, start_timeout=2.5),
        ),
    ],
)
def test_server_type(entry: dict[str, Any], expected: Any) -> None:
    assert parse_config(json.dumps({"mcpServers": {"s": entry}}), "c.json").servers["s"] == expected


BROKEN = [
    (
        '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}',
        ":3:26: invalid JSON: Expecting property name enclosed in double quotes",
    ),
    (
        '{\n  "mcpServers": {\n    "github": {"command": "npx", "args": ["-y", "x", 3]}\n  }\n}',
        ":3:54: mcpServers.github.args[2]: expected a string, got number",
    ),
    (
        '{"mcpServers": {"g": {"command": "x", "env": {"PORT": 8080}}}}',
        ":1:55: mcpServers.g.env.PORT: expected a string, got number",
    ),
    (
        '{"mcpServers": {\n  "remote": {"type": "websocket", "url": "ws://h"}}}',
        ":2:22: mcpServers.remote.type: unknown server type 'websocket' (expected stdio, http or sse)",
    ),
    ('{"mcpServers": {"x": {"args": []}}}', ':1:22: mcpServers.x: needs "command" (stdio) or "url" (http)'),
    ('{"mcpServers": {"x": {"type": "sse"}}}', ":1:22: mcpServers.x: type 'sse' needs \"url\""),
    ('{"tools": {"create_issue": {}}}', ":1:12: tools.create_issue: key must be 'server:tool'"),
    ('{"proxy": {"mode": "fast"}}', ":1:20: proxy.mode: expected 'discovery' or 'direct', got 'fast'"),
    ('{"proxy": {"port": 70000}}', ":1:20: proxy.port: expected an integer 0..65535, got 70000"),
    ('{"proxy": {"maxNameLength": 8}}', ":1:29: proxy.maxNameLength: expected an integer 16..128, got 8"),
    ('{"supervisor": {"stopGrace": 0}}', ":1:30: supervisor.stopGrace: expected a positive number, got 0"),
    (
        '{"supervisor": {"ringLines": 1.5}}',
        ":1:30: supervisor.ringLines: expected a positive integer, got 1.5",
    ),
    (
        '{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}',
        ":1:51: mcpServers.a.disabled: expected true or false, got string",
    ),
    ('{"mcpServers": {"": {"command": "x"}}}', ':1:17: mcpServers[""]: server name must not be empty'),
    ('{"mcpServers": []}', ":1:16: mcpServers: expected an object, got array"),
    ('{"synonyms": {"pr": "pull"}}', ":1:21: synonyms.pr: expected an array of strings, got string"),
    (
        '{"mcpServers": {"a": {"command": "x", "roots": ["/src", "https://h/repo"]}}}',
        ":1:57: mcpServers.a.roots[1]: a root is a folder or a file:// URI, not 'https://h/repo'",
    ),
    ("[]", ":1:1: expected a JSON object at the top level, got array"),
    (" \n", ": file is empty (expected a JSON object)"),
]


@pytest.mark.parametrize(("text", "suffix"), BROKEN)
def test_broken_file_gives_one_line_error_and_is_left_alone(tmp_path: Path, text: str, suffix: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}{suffix}"
    assert path.read_bytes() == text.encode()
    assert os.listdir(tmp_path) == ["config.json"]


def test_error_carries_its_parts() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config('{"proxy": {"mode": "fast"}}', "c.json")
    error = caught.value
    assert (error.source, error.line, error.column, error.key) == ("c.json", 1, 20, "proxy.mode")
    assert isinstance(error, ValueError)


# Saving -------------------------------------------------------------------------------------------


def test_unknown_keys_survive_load_modify_save(tmp_path: Path) -> None:
    original = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "github": {
                "command": "npx",
                "args": ["-y", "gh"],
                "cwd": None,
                "comment": "mine",
                "startTimeout": 30,
            },
            "remote": {"type": "streamableHttp", "url": "https://example.invalid/mcp", "x": {"n": [1, None]}},
        },
        "tools": {"github:create_issue": {"alwaysOn": True, "color": "red"}},
        "proxy": {"mode": "direct", "future": 1},
        "supervisor": {"callTimeout": 120, "stopGrace": 2.0, "experimental": True},
        "other": [1, {"a": None}],
    }
    path = write(tmp_path / "config.json", original)
    config = load_config(path)
    github = config.servers["github"]
    assert isinstance(github, StdioServerConfig)
    config = config.with_server(replace(github, args=[*github.args, "--x"]))
    config = config.with_server(HttpServerConfig("new", "https://new.invalid/mcp"))
    settings = config.tools["github:create_issue"]
    config = config.with_tool_settings("github:create_issue", replace(settings, aliases=["open_issue"]))
    save_config(config, path)

    expected = json.loads(json.dumps(original))
    expected["mcpServers"]["github"]["args"].append("--x")
    expected["mcpServers"]["new"] = {"type": "http", "url": "https://new.invalid/mcp"}
    expected["tools"]["github:create_issue"]["aliases"] = ["open_issue"]
    assert read_json(path) == expected
    assert '"stopGrace": 2.0,' in path.read_text(encoding="utf-8")  # untouched values stay as written
    assert config.document == expected  # kept in sync by the with_* helpers
    assert load_config(path) == config


def test_unmodified_config_saves_as_it_was_written(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(CLAUDE_DESKTOP, encoding="utf-8")
    save_config(load_config(path), path)
    assert read_json(path) == json.loads(CLAUDE_DESKTOP)  # no "disabled": false, no new sections


def test_save_writes_only_what_changed(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", {"mcpServers": {"a": {"command": "x"}}})
    config = load_config(path)
    off = config.with_server(replace(config.servers["a"], disabled=True))
    save_config(off, path)
    assert read_json(path) == {"mcpServers": {"a": {"command": "x", "disabled": True}}}
    on = load_config(path)
    save_config(on.with_server(replace(on.servers["a"], disabled=False, start_timeout=45.0)), path)
    assert read_json(path) == {"mcpServers": {"a": {"command": "x", "disabled": False, "startTimeout": 45}}}
    assert "45.0" not in path.read_text(encoding="utf-8")  # whole seconds written as integers
    # A tool reset to its defaults leaves no empty entry behind.
    save_config(load_config(path).with_tool_settings("a:t", ToolSettings()), path)
    assert "tools" not in read_json(path)


def test_changing_a_server_transport_drops_the_old_transport_keys(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", {"mcpServers": {"a": {"command": "x", "args": ["y"], "note": 1}}})
    save_config(load_config(path).with_server(HttpServerConfig("a", "http://h/sse", transport="sse")), path)
    assert read_json(path) == {"mcpServers": {"a": {"note": 1, "type": "sse", "url": "http://h/sse"}}}
    assert load_config(path).servers["a"] == HttpServerConfig("a", "http://h/sse", transport="sse")


def test_new_file_is_minimal_private_and_its_folder_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "config.json"
    save_config(Config().with_server(StdioServerConfig("s", "cmd")), path)
    assert read_json(path) == {"mcpServers": {"s": {"command": "cmd"}}}
    assert os.listdir(path.parent) == ["config.json"]
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_save_keeps_exactly_one_backup_of_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(CLAUDE_DESKTOP, encoding="utf-8")
    first = path.read_bytes()
    config = load_config(path).without_server("sqlite")
    save_config(config, path)
    assert (tmp_path / "config.json.bak").read_bytes() == first
    second = path.read_bytes()
    save_config(config.without_server("github"), path)
    assert (tmp_path / "config.json.bak").read_bytes() == second
    assert list(read_json(path)["mcpServers"]) == ["filesystem"]
    assert sorted(os.listdir(tmp_path)) == ["config.json", "config.json.bak"]  # no temp files left


def test_saving_what_is_on_disk_touches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    config = Config().with_server(StdioServerConfig("s", "cmd"))
    save_config(config, path)
    save_config(config, path)
    assert os.listdir(tmp_path) == ["config.json"]  # no backup of identical content


def test_failed_save_leaves_the_file_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.json"
    path.write_text(CLAUDE_DESKTOP, encoding="utf-8")
    real_replace = os.replace

    def disk_full(src: Any, dst: Any) -> None:
        if Path(dst) == path:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="disk full"):
        save_config(Config(), path)
    assert path.read_text(encoding="utf-8") == CLAUDE_DESKTOP
    assert sorted(os.listdir(tmp_path)) == ["config.json", "config.json.bak"]


@posix_only
def test_save_preserves_the_file_mode(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", {"mcpServers": {}})
    path.chmod(0o640)
    save_config(Config().with_server(StdioServerConfig("s", "cmd")), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "config.json.bak").stat().st_mode) == 0o640


@posix_only
def test_save_through_a_symlink_updates_its_target(tmp_path: Path) -> None:
    target = write(tmp_path / "dotfiles.json", {"mcpServers": {}})
    link = tmp_path / "config.json"
    link.symlink_to(target)
    save_config(Config().with_server(StdioServerConfig("s", "cmd")), link)
    assert link.is_symlink()
    assert read_json(target) == {"mcpServers": {"s": {"command": "cmd"}}}


def test_helpers_return_new_configs() -> None:
    config = parse_config('{"mcpServers": {"a": {"command": "x"}, "b": {"url": "http://h", "disabled": true}}}', "c")
    smaller = config.without_server("a")
    assert list(config.servers) == ["a", "b"] and list(smaller.servers) == ["b"]
    assert list(smaller.document["mcpServers"]) == ["b"]
    assert smaller.enabled_servers() == []
    before = json.dumps(config.document)
    replaced = config.with_server(StdioServerConfig("a", "y", ["1"]))
    assert list(replaced.servers) == ["a", "b"]  # keeps its place
    assert json.dumps(config.document) == before  # the original is untouched
    replaced.servers["a"].args.append("2")  # type: ignore[union-attr]
    assert replaced.document["mcpServers"]["a"]["args"] == ["1"]  # the document shares no lists
    with pytest.raises(KeyError):
        config.without_server("zzz")
    with pytest.raises(ValueError, match="server:tool"):
        config.with_tool_settings("create_issue", ToolSettings())


# Paths --------------------------------------------------------------------------------------------


def test_home_puts_everything_under_one_folder(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path)})
    assert paths == Paths(tmp_path / "config.json", tmp_path / "cache", tmp_path / "logs", tmp_path / "run")


def test_config_option_overrides_the_config_file_alone(tmp_path: Path) -> None:
    paths = Paths.resolve(config_file=tmp_path / "elsewhere.json", env={"MCPMANAGER_HOME": str(tmp_path)})
    assert paths == Paths(tmp_path / "elsewhere.json", tmp_path / "cache", tmp_path / "logs", tmp_path / "run")


@pytest.mark.skipif(sys.platform != "linux", reason="XDG layout")
def test_platformdirs_decide_without_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("config", "cache", "state", "runtime"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("MCPMANAGER_HOME", str(tmp_path / "ignored"))  # env= replaces os.environ
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    assert Paths.resolve(env={}) == Paths(
        tmp_path / "config" / "mcpmanager" / "config.json",
        tmp_path / "cache" / "mcpmanager",
        tmp_path / "state" / "mcpmanager" / "log",
        tmp_path / "runtime" / "mcpmanager",
    )


@pytest.mark.skipif(sys.platform != "linux", reason="XDG layout")
def test_runtime_dir_falls_back_to_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 4_000_000)  # no /run/user/<uid> for this one
    assert Paths.resolve(env={}).runtime_dir == tmp_path / "mcpmanager" / "run"


@posix_only
def test_ensure_creates_the_folders_with_a_private_runtime_dir(tmp_path: Path) -> None:
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(tmp_path)})
    paths.runtime_dir.mkdir(mode=0o755)
    paths.runtime_dir.chmod(0o755)
    paths.ensure()
    assert paths.cache_dir.is_dir() and paths.log_dir.is_dir()
    assert stat.S_IMODE(paths.runtime_dir.stat().st_mode) == 0o700
