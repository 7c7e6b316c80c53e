"""Goose (`config.yaml`, `extensions`), on Linux, macOS and Windows: where its file is, how it is read
(YAML 1.2), and the round trips on its sample of tests/data/clients/goose (written from its
documentation): import dry run and real, install with every other byte kept, undo byte for byte,
`--disable-served` (Goose's `enabled: false`), undo after Goose rewrote its file, secrets masked, a
broken file refused with its line and column. What every client's sample goes through is in
test_contract.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpmanager.core.clients import goose
from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change, Target
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import plan_import
from mcpmanager.core.clients.install import inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig
from tests.core.clients.sample_files import COMMAND, DATA, PLATFORMS, apply_import, files_under, inserted_only

SECRETS = ["ghp_FAKE0000000000000000000000000goose", "FAKE-goose-token-0000", "FAKE-goose-slack-0000"]
NAMES = ["filesystem", "github", "slack", "remote-tools", "old-sse", "time"]
FILESYSTEM = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
# mcpmanager's servers in the tests of an edited file: Continue's fetch and Goose's filesystem
FETCH = {
    "command": "uvx",
    "args": ["mcp-server-fetch", "--api-key", "FAKE-continue-fetchkey-0000"],
    "env": {"FETCH_TOKEN": "FAKE-continue-fetch-0000"},
    "cwd": "/srv/fetch",
}


def goose_dir(home: Path, platform: str) -> Path:
    return home / "AppData/Roaming/Block/goose/config" if platform == "win32" else home / ".config/goose"


def home_with(tmp_path: Path, platform: str = "linux") -> Path:
    home = tmp_path / "home"
    goose_dir(home, platform).mkdir(parents=True)
    shutil.copyfile(DATA / "goose" / "config.yaml", goose_dir(home, platform) / "config.yaml")
    return home


def load(data: bytes | None) -> Any:
    return yaml.safe_load((data or b"").decode("utf-8"))


def config_with(tmp_path: Path, servers: dict[str, Any]) -> Config:
    path = tmp_path / "mcpmanager.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_config(path)


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    home = tmp_path / "home"
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(home, platform, {})]
    assert [p for p in places if p[0] == "goose"] == [
        ("goose", "Goose", goose_dir(home, platform) / "config.yaml", "goose")
    ]


def test_the_environment_moves_the_file(tmp_path: Path) -> None:
    """XDG_CONFIG_HOME (Linux and macOS: Goose follows XDG there), APPDATA (Windows), GOOSE_PATH_ROOT
    (its `config` folder, everywhere); a relative one ignored."""
    other = tmp_path / "elsewhere"

    def place(platform: str, env: dict[str, str]) -> Path:
        [found] = [w.path for w in client_locations(tmp_path, platform, env) if w.client == "goose"]
        return found

    for platform in ("linux", "darwin"):
        assert place(platform, {"XDG_CONFIG_HOME": str(other)}) == other / "goose/config.yaml"
    assert place("win32", {"appdata": str(other)}) == other / "Block/goose/config/config.yaml"
    for platform in PLATFORMS:
        assert place(platform, {"GOOSE_PATH_ROOT": str(other)}) == other / "config/config.yaml"
    assert place("linux", {"GOOSE_PATH_ROOT": "rel"}) == tmp_path / ".config/goose/config.yaml"


# Reading -------------------------------------------------------------------------------------------


def test_extensions_as_mcpmanager_servers() -> None:
    path = DATA / "goose" / "config.yaml"
    read = read_client_config("goose", path, "goose")
    github_args = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]
    github_env = {"GITHUB_PERSONAL_ACCESS_TOKEN": SECRETS[0], "GITHUB_TOOLSETS": "repos,issues"}
    headers = {"Authorization": f"Bearer {SECRETS[1]}", "X-Team": "${TEAM_ID}"}
    slack_args = ["-y", "@modelcontextprotocol/server-slack", "--bot-token", SECRETS[2]]
    assert read.servers == [  # developer (builtin) and computercontroller (platform) are parts of Goose
        StdioServerConfig("filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]),
        StdioServerConfig("github", "docker", github_args, github_env),
        StdioServerConfig("slack", "npx", slack_args, {"SLACK_TEAM_ID": "T00000000"}),
        HttpServerConfig("remote-tools", "https://mcp.example.com/mcp", headers),
        HttpServerConfig("old-sse", "http://localhost:8931/sse", disabled=True, transport="sse"),
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone=Europe/Paris"], disabled=True),
    ]
    assert read.problems == [
        f"{path}:56:5: extensions.slack.env_keys: SLACK_BOT_TOKEN: values Goose keeps in its keyring (or "
        "secrets.yaml); not read (add them to env in mcpmanager)",
        f"{path}:69:5: extensions.remote-tools: uses ${{TEAM_ID}}: left as written (mcpmanager does not expand them)",
        f"{path}:80:5: extensions.old-sse.type: sse: Goose no longer starts SSE extensions; imported as SSE",
    ]


def test_yaml_1_2_values_and_entries_that_do_not_read(tmp_path: Path) -> None:
    """`on`, `yes` and `0755` are strings in YAML 1.2 (as Goose and Continue read them), not YAML 1.1's
    booleans and octal; a number in env is passed as its text."""
    path = tmp_path / "config.yaml"
    path.write_text(
        "extensions:\n"
        "  a: {type: stdio, enabled: true, cmd: x, args: [on, '1'], envs: {MODE: yes, UMASK: 0755, N: 3}}\n"
        "  b: {type: stdio, enabled: true, args: []}\n"
        "  c: {type: inline_python, enabled: true, code: 'print(1)'}\n"
        "  d: [not, a, mapping]\n"
    )
    read = read_client_config("goose", path, "goose")
    assert read.servers == [StdioServerConfig("a", "x", ["on", "1"], {"MODE": "yes", "UMASK": "755", "N": "3"})]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        'extensions.b: needs "command" (stdio) or "url" (http) (server \'b\' not imported)',
        "extensions.c.type: 'inline_python' is an extension Goose runs itself, not a server (server 'c' not imported)",
        "extensions.d: expected a mapping (server 'd' not imported)",
    ]


def test_a_broken_file_gives_its_line_and_column_and_changes_nothing(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("goose", home, "linux", {})
    target.path.write_bytes(target.path.read_bytes().replace(b"        cmd: uvx\n", b"        cmd: [uvx\n"))
    original = files_under(home)
    read = read_client_config("goose", target.path, target.layout)
    assert read.servers == [] and len(read.problems) == 1
    assert read.problems[0].startswith(f"{target.path}:91:"), read.problems
    assert ": invalid YAML: " in read.problems[0]
    config = tmp_path / "mcpmanager" / "config.json"
    assert [a.name for a in plan_import("goose", config, home, "linux", {}).added] == []
    with pytest.raises(InstallError, match=r"config\.yaml:91:\d+: invalid YAML: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match=r"config\.yaml:91:\d+: invalid YAML"):
        plan_undo(target)
    assert inspect(target).problem is not None
    assert files_under(home) == original and not config.exists()


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, platform)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("goose", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    assert saved["remote-tools"]["headers"]["Authorization"] == f"Bearer {SECRETS[1]}"
    assert saved["time"]["disabled"] is True and saved["old-sse"]["type"] == "sse"
    assert files_under(home) == original  # the client's file is only read
    again = apply_import(plan_import("goose", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, platform)
    original = files_under(home)
    [target] = install_targets("goose", home, platform, {})
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after and backup is not None and backup.read_bytes() == before
    doc, was = load(after), load(before)
    added = inserted_only(before.decode(), after.decode())
    entry = doc["extensions"].pop("mcpmanager")
    assert entry["cmd"] == COMMAND[0] and entry["args"] == ["connect", "--mode", "direct"]
    assert entry["enabled"] is True and entry["type"] == "stdio"
    assert added.startswith("    mcpmanager:\n        type: stdio\n        name: mcpmanager\n")
    assert after.decode().index("    mcpmanager:") < after.decode().index("# slash commands")
    assert doc == was  # every other setting and server, as it was
    assert inspect(target).mode == "direct"

    again = plan_install(target, COMMAND, "direct")
    assert not again.changed and apply_change(again) is None
    other = plan_install(target, COMMAND, "discovery")  # another mode: its lines replaced in place
    assert other.after == after.replace(b"- direct", b"- discovery")

    undo = plan_undo(target)
    assert undo.changed and undo.exact and undo.restore == backup
    apply_change(undo)
    assert files_under(home) == original  # byte for byte, and the backup gone
    assert inspect(target).mode is None


def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("goose", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("goose", home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    diff = change.diff()
    assert [s for s in SECRETS if s in diff] == []
    apply_change(change)
    text = target.path.read_text()
    on_again = text.replace("enabled: false  " + goose.OFF, "enabled: true")  # Goose: its one value changed
    inserted_only(original[target.path.relative_to(home).as_posix()].decode(), on_again)
    # time and old-sse are off in Goose already: not touched
    assert list(change.moved) == ["filesystem", "github", "slack", "remote-tools"]
    on = [n for n, e in load(text.encode())["extensions"].items() if e.get("enabled")]
    assert on == ["developer", "computercontroller", "mcpmanager"]
    assert text.count("enabled: false  " + goose.OFF) == 4
    assert inspect(target, config, home).disabled == change.moved

    undo = plan_undo(target)
    assert undo.exact and undo.moved == change.moved
    apply_change(undo)
    assert files_under(home) == original


def test_undo_after_the_file_was_edited_keeps_the_edit(tmp_path: Path) -> None:
    """Goose rewrites its file itself: undo then takes out only what install put in."""
    home = home_with(tmp_path)
    config = config_with(tmp_path, {"fetch": FETCH, "filesystem": FILESYSTEM})
    [target] = install_targets("goose", home, "linux", {})
    original = target.path.read_text()
    apply_change(plan_install(target, COMMAND, config=config, disable_served=True))
    edit = ("GOOSE_TEMPERATURE: 0.7", "GOOSE_TEMPERATURE: 0.5")
    target.path.write_text(target.path.read_text().replace(*edit))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact and undo.moved == ("filesystem",)
    apply_change(undo)
    assert target.path.read_text() == original.replace(*edit)
    assert list_backups(target.path)[0].read_text() == original


def test_undo_after_goose_rewrote_its_file_turns_back_on_what_install_turned_off(tmp_path: Path) -> None:
    """Goose writes its whole file when a setting changes (serde_yaml: comments, mcpmanager's marks
    with them, gone): undo keeps Goose's file, takes out mcpmanager's extension and turns back on
    what was on before the install and is off now."""
    home = home_with(tmp_path)
    [target] = install_targets("goose", home, "linux", {})
    apply_change(plan_install(target, COMMAND, config=config_with(tmp_path, {"fs": FILESYSTEM}), disable_served=True))
    doc = load(target.path.read_bytes())
    doc["GOOSE_MODE"] = "auto"  # the setting changed in Goose
    target.path.write_text(yaml.safe_dump(doc, sort_keys=False))
    undo = plan_undo(target)
    assert not undo.exact and undo.moved == ("filesystem",)
    apply_change(undo)
    after = load(target.path.read_bytes())
    assert after == load((DATA / "goose" / "config.yaml").read_bytes()) | {"GOOSE_MODE": "auto"}


# Other forms of the file ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "extensions:\n  mcpmanager:\n    type: stdio\n"),
        ("GOOSE_MODE: auto\nextensions: {}\n", "GOOSE_MODE: auto\nextensions:\n  mcpmanager:\n"),
        ("extensions:  # none yet\nX: 1", "extensions:  # none yet\n  mcpmanager:\n"),
        ("extensions: {a: {type: builtin, enabled: true}}\n", 'extensions: {a: {type: builtin, enabled: '
         'true}, mcpmanager: {"type": "stdio"'),
    ],
)  # fmt: skip
def test_other_forms_get_the_entry_and_undo_gives_them_back(tmp_path: Path, text: str, expected: str) -> None:
    home = tmp_path / "home"
    folder = home / ".config/goose"
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_bytes(text.encode())
    [target] = install_targets("goose", home, "linux", {})
    apply_change(plan_install(target, COMMAND))
    after = path.read_bytes().decode()
    assert after.startswith(expected), after
    entry = goose.bridge_of(load(after.encode()))
    assert entry["args"] == ["connect"]
    apply_change(plan_undo(target))
    assert path.read_bytes() == text.encode()


def test_what_cannot_be_turned_off_as_text_is_refused(tmp_path: Path) -> None:
    """A flow-style Goose extension has no `enabled` line to mark: refused, nothing written."""
    config = config_with(tmp_path, {"a": {"command": "x"}})
    text = "extensions:\n  a: {type: stdio, enabled: true, cmd: x, args: []}\n"
    folder = tmp_path / "goose"
    folder.mkdir()
    path = folder / "config.yaml"
    path.write_text(text)
    target = Target("goose", "goose", path, "goose")
    with pytest.raises(InstallError, match="not changed"):
        plan_install(target, COMMAND, config=config, disable_served=True)
    assert plan_install(target, COMMAND, config=config).served == ("a",)
    assert path.read_text() == text


def test_an_edit_that_would_change_more_than_it_means_to_is_refused(tmp_path: Path) -> None:
    """A file that ends its document with `...`: a section appended after it would start a second
    document, which the check of the result (parsed again, compared) refuses."""
    folder = tmp_path / ".config/goose"
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_text("name: c\nversion: 1.0.0\n...\n")
    [target] = install_targets("goose", tmp_path, "linux", {})
    with pytest.raises(InstallError, match=r"cannot add its .* to this file safely as text; not changed"):
        plan_install(target, COMMAND)
    assert path.read_text() == "name: c\nversion: 1.0.0\n...\n"


# What export reuses: a server in Goose's own shape -------------------------------------------------


SERVERS: list[ServerConfig] = [
    StdioServerConfig("files", "npx", ["-y", "server", "on", "--flag"], {"TOKEN": "FAKE-0000", "N": "1"}),
    HttpServerConfig("remote", "https://mcp.example.com/mcp", {"Authorization": "Bearer FAKE-0000"}),
]


def test_servers_written_as_extensions_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("extensions:\n" + goose.render({s.name: goose.extension_of(s) for s in SERVERS}))
    assert read_client_config("goose", path, "goose").servers == SERVERS
    with pytest.raises(goose.UnsupportedServer):
        goose.extension_of(HttpServerConfig("old", "https://x.example/sse", transport="sse"))


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("goose", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"").diff()
    assert [s for s in SECRETS if s in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode().splitlines())
    assert "GITHUB_PERSONAL_ACCESS_TOKEN: ***" in diff


def test_crlf_a_byte_order_mark_and_no_final_line_end_are_followed(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("goose", home, "linux", {})
    before = b"\xef\xbb\xbf" + target.path.read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n")
    target.path.write_bytes(before)
    served = {"fetch": FETCH, "fs": FILESYSTEM}
    change = plan_install(target, COMMAND, config=config_with(tmp_path, served), disable_served=True)
    assert change.moved == ("filesystem",)
    apply_change(change)
    after = target.path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") and after.count(b"\n") == after.count(b"\r\n")
    read = {s.name: s for s in read_client_config("goose", target.path, target.layout).servers}
    assert "mcpmanager" in read
    assert read["filesystem"].disabled  # off
    apply_change(plan_undo(target))
    assert target.path.read_bytes() == before
