"""Goose (`config.yaml`, `extensions`) and Continue (`~/.continue/config.yaml` and its block files,
`mcpServers` lists), on Linux, macOS and Windows: where their files are, how they are read, and the
round trips on the samples of tests/data/clients/goose and continue (written from each client's
documentation): import dry run and real, install with every other byte kept, undo byte for byte,
`--disable-served` (Goose's `enabled: false`; Continue's items commented out), secrets masked, a
broken file refused with its line and column."""

from __future__ import annotations

import difflib
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from mcpmanager.core.clients import continue_yaml, goose
from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change, Target
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import ImportPlan, plan_import
from mcpmanager.core.clients.install import inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig
from mcpmanager.core.engine.control import Control

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
PLATFORMS = ["linux", "darwin", "win32"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
GOOSE_SECRETS = ["ghp_FAKE0000000000000000000000000goose", "FAKE-goose-token-0000", "FAKE-goose-slack-0000"]
CONTINUE_SECRETS = [
    "FAKE-continue-linear-0000",
    "FAKE-continue-apikey-0000",
    "FAKE-continue-fetch-0000",
    "FAKE-continue-fetchkey-0000",
]
FETCH_ARGS = ["mcp-server-fetch", "--api-key", CONTINUE_SECRETS[3]]
GOOSE_NAMES = ["filesystem", "github", "slack", "remote-tools", "old-sse", "time"]
CONTINUE_NAMES = ["SQLite-MCP", "GitHub", "Linear", "Docs", "fetch"]


def goose_dir(home: Path, platform: str) -> Path:
    return home / "AppData/Roaming/Block/goose/config" if platform == "win32" else home / ".config/goose"


def home_with(tmp_path: Path, client: str, platform: str = "linux") -> Path:
    home = tmp_path / "home"
    if client == "goose":
        goose_dir(home, platform).mkdir(parents=True)
        shutil.copyfile(DATA / "goose" / "config.yaml", goose_dir(home, platform) / "config.yaml")
    else:
        shutil.copytree(DATA / "continue", home / ".continue")
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def load(data: bytes | None) -> Any:
    return yaml.safe_load((data or b"").decode("utf-8"))


def inserted_only(before: str, after: str) -> str:
    """The text install put in, after checking every character of `before` is still in `after`, in order."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, before[i1:i2], after[j1:j2])
        if tag == "insert":
            added.append(after[j1:j2])
    return "".join(added)


def apply_import(plan: ImportPlan, config: Path) -> ImportPlan:
    added, skipped = anyio.run(Control(config).import_servers, plan.candidates)
    return replace(plan, added=added, skipped=skipped)


def config_with(tmp_path: Path, servers: dict[str, Any]) -> Config:
    path = tmp_path / "mcpmanager.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_config(path)


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_places_on_every_platform(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, "continue")
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(home, platform, {})]
    mine = [p for p in places if p[0] in ("goose", "continue")]
    assert mine == [
        ("goose", "Goose", goose_dir(home, platform) / "config.yaml", "goose"),
        ("continue", "Continue", home / ".continue/config.yaml", "continue"),
        ("continue", "Continue (mcpServers/playwright-mcp.yaml)", home / ".continue/mcpServers/playwright-mcp.yaml",
         "continue-block"),
    ]  # fmt: skip


def test_the_environment_moves_the_files(tmp_path: Path) -> None:
    """XDG_CONFIG_HOME (Linux and macOS: Goose follows XDG there), APPDATA (Windows), GOOSE_PATH_ROOT
    (its `config` folder, everywhere), CONTINUE_GLOBAL_DIR (the folder itself); relative ones ignored."""
    other = tmp_path / "elsewhere"

    def places(platform: str, env: dict[str, str]) -> dict[str, Path]:
        found = client_locations(tmp_path, platform, env)
        return {w.client: w.path for w in found if w.client in ("goose", "continue")}

    for platform in ("linux", "darwin"):
        assert places(platform, {"XDG_CONFIG_HOME": str(other)})["goose"] == other / "goose/config.yaml"
    assert places("win32", {"appdata": str(other)})["goose"] == other / "Block/goose/config/config.yaml"
    for platform in PLATFORMS:
        env = {"GOOSE_PATH_ROOT": str(other), "CONTINUE_GLOBAL_DIR": str(other / "c")}
        assert places(platform, env) == {"goose": other / "config/config.yaml", "continue": other / "c/config.yaml"}
    relative = places("linux", {"GOOSE_PATH_ROOT": "rel", "CONTINUE_GLOBAL_DIR": "rel"})
    assert relative == {"goose": tmp_path / ".config/goose/config.yaml", "continue": tmp_path / ".continue/config.yaml"}


def test_block_files_are_read_but_never_install_targets(tmp_path: Path) -> None:
    home = home_with(tmp_path, "continue")
    assert [t.path for t in install_targets("continue", home, "linux", {})] == [home / ".continue/config.yaml"]


# Reading -------------------------------------------------------------------------------------------


def test_goose_extensions_as_mcpmanager_servers() -> None:
    path = DATA / "goose" / "config.yaml"
    read = read_client_config("goose", path, "goose")
    github_args = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]
    github_env = {"GITHUB_PERSONAL_ACCESS_TOKEN": GOOSE_SECRETS[0], "GITHUB_TOOLSETS": "repos,issues"}
    headers = {"Authorization": f"Bearer {GOOSE_SECRETS[1]}", "X-Team": "${TEAM_ID}"}
    slack_args = ["-y", "@modelcontextprotocol/server-slack", "--bot-token", GOOSE_SECRETS[2]]
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


def test_continue_items_as_mcpmanager_servers() -> None:
    path = DATA / "continue" / "config.yaml"
    read = read_client_config("continue", path, "continue")
    token = "${{ secrets.GITHUB_PERSONAL_ACCESS_TOKEN }}"
    assert read.servers == [
        StdioServerConfig("SQLite-MCP", "npx", ["-y", "mcp-sqlite", "/path/to/your/database.db"]),
        StdioServerConfig(
            "GitHub", "npx", ["-y", "@modelcontextprotocol/server-github"], {"GITHUB_PERSONAL_ACCESS_TOKEN": token}
        ),
        HttpServerConfig(
            "Linear", "https://mcp.linear.example/mcp", {"Authorization": f"Bearer {CONTINUE_SECRETS[0]}"}
        ),
        HttpServerConfig("Docs", "https://docs.example.com/sse", transport="sse"),
        StdioServerConfig("fetch", "uvx", FETCH_ARGS, {"FETCH_TOKEN": CONTINUE_SECRETS[2]}, "/srv/fetch"),
    ]
    assert read.problems == [
        f"{path}:23:3: mcpServers[0] ('SQLite MCP'): not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        "imported as 'SQLite-MCP'",
        f"{path}:29:3: mcpServers[1] ('GitHub'): uses {token}, which Continue fills in (its secrets, the Hub); "
        "imported as written: enter the values in mcpmanager",
        f"{path}:42:3: mcpServers[3] ('Docs').apiKey: a key Continue sends for this server; not read (add an "
        "Authorization header in mcpmanager)",
        f"{path}:54:3: mcpServers[5]: uses anthropic/memory-mcp: a Continue Hub block only Continue resolves; "
        "not imported",
    ]
    block = DATA / "continue" / "mcpServers" / "playwright-mcp.yaml"
    read = read_client_config("continue", block, "continue-block")
    assert read.servers == [StdioServerConfig("Browser-search", "npx", ["@playwright/mcp@latest"])]


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


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_a_broken_file_gives_its_line_and_column_and_changes_nothing(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    good, bad = (
        (b"        cmd: uvx\n", b"        cmd: [uvx\n")
        if client == "goose"
        else (b"cwd: /srv/fetch", b"cwd: [/srv/fetch")
    )
    target.path.write_bytes(target.path.read_bytes().replace(good, bad))
    original = files_under(home)
    read = read_client_config(client, target.path, target.layout)
    assert read.servers == [] and len(read.problems) == 1
    line = 91 if client == "goose" else 53
    assert read.problems[0].startswith(f"{target.path}:{line}:"), read.problems
    assert ": invalid YAML: " in read.problems[0]
    config = tmp_path / "mcpmanager" / "config.json"
    added = [a.name for a in plan_import(client, config, home, "linux", {}).added]
    assert added == ([] if client == "goose" else ["Browser-search"])  # Continue's block file still reads
    with pytest.raises(InstallError, match=rf"config\.yaml:{line}:\d+: invalid YAML: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match=rf"config\.yaml:{line}:\d+: invalid YAML"):
        plan_undo(target)
    assert inspect(target).problem is not None
    assert files_under(home) == original and not config.exists()


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", ["goose", "continue"])
def test_import_dry_run_then_import(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client, platform)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    names = GOOSE_NAMES if client == "goose" else [*CONTINUE_NAMES, "Browser-search"]
    plan = plan_import(client, config, home, platform, {})
    assert [a.name for a in plan.added] == names and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == names
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == names
    if client == "goose":
        assert saved["remote-tools"]["headers"]["Authorization"] == f"Bearer {GOOSE_SECRETS[1]}"
        assert saved["time"]["disabled"] is True and saved["old-sse"]["type"] == "sse"
    else:
        assert saved["fetch"] == {
            "command": "uvx",
            "args": FETCH_ARGS,
            "env": {"FETCH_TOKEN": CONTINUE_SECRETS[2]},
            "cwd": "/srv/fetch",
        }
    assert files_under(home) == original  # the client's files are only read
    again = apply_import(plan_import(client, config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(names)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", ["goose", "continue"])
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client, platform)
    original = files_under(home)
    [target] = install_targets(client, home, platform, {})
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after and backup is not None and backup.read_bytes() == before
    doc, was = load(after), load(before)
    added = inserted_only(before.decode(), after.decode())
    if client == "goose":
        entry = doc["extensions"].pop("mcpmanager")
        assert entry["cmd"] == COMMAND[0] and entry["args"] == ["connect", "--mode", "direct"]
        assert entry["enabled"] is True and entry["type"] == "stdio"
        assert added.startswith("    mcpmanager:\n        type: stdio\n        name: mcpmanager\n")
        assert after.decode().index("    mcpmanager:") < after.decode().index("# slash commands")
    else:
        entry = doc["mcpServers"].pop()
        assert entry == {"name": "mcpmanager", "type": "stdio", "command": COMMAND[0], "args": [
            "connect", "--mode", "direct"]}  # fmt: skip
        assert added.startswith("- name: mcpmanager\n  type: stdio\n")  # the list's own (indentless) form
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


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import(client, config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets(client, home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    diff = change.diff()
    assert [s for s in GOOSE_SECRETS + CONTINUE_SECRETS if s in diff] == []
    apply_change(change)
    text = target.path.read_text()
    on_again = text.replace("enabled: false  " + goose.OFF, "enabled: true")  # Goose: its one value changed
    added = inserted_only(original[target.path.relative_to(home).as_posix()].decode(), on_again)
    if client == "goose":  # time and old-sse are off in Goose already: not touched
        assert list(change.moved) == ["filesystem", "github", "slack", "remote-tools"]
        on = [n for n, e in load(text.encode())["extensions"].items() if e.get("enabled")]
        assert on == ["developer", "computercontroller", "mcpmanager"]
        assert text.count("enabled: false  " + goose.OFF) == 4
    else:
        assert list(change.moved) == ["SQLite MCP", "GitHub", "Linear", "Docs", "fetch"]
        items = load(text.encode())["mcpServers"]
        assert items == [{"uses": "anthropic/memory-mcp"}, {"name": "mcpmanager", **items[1]} | {"name": "mcpmanager"}]
        assert added.count(continue_yaml.OFF) == 31  # each line of the five items, nothing else of the user's changed
        assert any("playwright-mcp.yaml also has Browser-search" in note for note in change.notes)
    assert inspect(target, config, home).disabled == change.moved

    undo = plan_undo(target)
    assert undo.exact and undo.moved == change.moved
    apply_change(undo)
    assert files_under(home) == original


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_undo_after_the_file_was_edited_keeps_the_edit(tmp_path: Path, client: str) -> None:
    """Goose rewrites its file itself: undo then takes out only what install put in."""
    home = home_with(tmp_path, client)
    config = config_with(tmp_path, {"fetch": {"command": "uvx", "args": FETCH_ARGS, "env": {
        "FETCH_TOKEN": CONTINUE_SECRETS[2]}, "cwd": "/srv/fetch"}, "filesystem": {"command": "npx", "args": [
        "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}})  # fmt: skip
    [target] = install_targets(client, home, "linux", {})
    original = target.path.read_text()
    apply_change(plan_install(target, COMMAND, config=config, disable_served=True))
    edit = ("GOOSE_TEMPERATURE: 0.7", "GOOSE_TEMPERATURE: 0.5") if client == "goose" else ("diff\n", "diff2\n")
    target.path.write_text(target.path.read_text().replace(*edit))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact and undo.moved == (("filesystem",) if client == "goose" else ("fetch",))
    apply_change(undo)
    assert target.path.read_text() == original.replace(*edit)
    assert list_backups(target.path)[0].read_text() == original


def test_undo_after_goose_rewrote_its_file_turns_back_on_what_install_turned_off(tmp_path: Path) -> None:
    """Goose writes its whole file when a setting changes (serde_yaml: comments, mcpmanager's marks
    with them, gone): undo keeps Goose's file, takes out mcpmanager's extension and turns back on
    what was on before the install and is off now."""
    home = home_with(tmp_path, "goose")
    fs = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
    [target] = install_targets("goose", home, "linux", {})
    apply_change(plan_install(target, COMMAND, config=config_with(tmp_path, {"fs": fs}), disable_served=True))
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
    ("client", "text", "expected"),
    [
        ("goose", "", "extensions:\n  mcpmanager:\n    type: stdio\n"),
        ("goose", "GOOSE_MODE: auto\nextensions: {}\n", "GOOSE_MODE: auto\nextensions:\n  mcpmanager:\n"),
        ("goose", "extensions:  # none yet\nX: 1", "extensions:  # none yet\n  mcpmanager:\n"),
        ("goose", "extensions: {a: {type: builtin, enabled: true}}\n", 'extensions: {a: {type: builtin, enabled: '
         'true}, mcpmanager: {"type": "stdio"'),
        ("continue", "", continue_yaml.NEW_FILE + "mcpServers:\n  - name: mcpmanager\n"),
        ("continue", "name: c\r\nmcpServers: []\r\n", "name: c\r\nmcpServers:\r\n  - name: mcpmanager\r\n"),
        ("continue", "mcpServers: [{name: a, command: x}]",
         'mcpServers: [{name: a, command: x}, {"name": "mcpmanager"'),
        ("continue", "name: c\n    # odd\nmcpServers:\n    -   name: a\n        command: x\n# end",
         "name: c\n    # odd\nmcpServers:\n    -   name: a\n        command: x\n    -   name: mcpmanager\n"),
    ],
)  # fmt: skip
def test_other_forms_get_the_entry_and_undo_gives_them_back(
    tmp_path: Path, client: str, text: str, expected: str
) -> None:
    home = tmp_path / "home"
    folder = home / (".config/goose" if client == "goose" else ".continue")
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_bytes(text.encode())
    [target] = install_targets(client, home, "linux", {})
    apply_change(plan_install(target, COMMAND))
    after = path.read_bytes().decode()
    assert after.startswith(expected), after
    dialect = goose if client == "goose" else continue_yaml
    entry = dialect.bridge_of(load(after.encode()))
    assert entry["args"] == ["connect"]
    apply_change(plan_undo(target))
    assert path.read_bytes() == text.encode()


def test_continue_config_json_is_not_replaced_by_a_new_config_yaml(tmp_path: Path) -> None:
    folder = tmp_path / ".continue"
    folder.mkdir()
    (folder / "config.json").write_text('{"models": []}')
    [target] = install_targets("continue", tmp_path, "linux", {})
    with pytest.raises(InstallError, match=r"Continue reads config\.json in this folder"):
        plan_install(target, COMMAND)
    assert not target.path.exists()


def test_what_cannot_be_turned_off_as_text_is_refused(tmp_path: Path) -> None:
    """A flow-style Goose extension has no `enabled` line to mark; a Continue item with an anchor used
    elsewhere cannot be commented out without changing the other value: both refused, nothing written."""
    config = config_with(tmp_path, {"a": {"command": "x"}})
    cases = {
        "goose": "extensions:\n  a: {type: stdio, enabled: true, cmd: x, args: []}\n",
        "continue": "mcpServers:\n  - &a\n    name: a\n    command: x\nother: *a\n",
    }
    for client, text in cases.items():
        folder = tmp_path / client
        folder.mkdir()
        path = folder / "config.yaml"
        path.write_text(text)
        target = Target(client, client, path, "goose" if client == "goose" else "continue")
        with pytest.raises(InstallError, match="not changed"):
            plan_install(target, COMMAND, config=config, disable_served=True)
        assert plan_install(target, COMMAND, config=config).served == ("a",)
        assert path.read_text() == text


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_an_edit_that_would_change_more_than_it_means_to_is_refused(tmp_path: Path, client: str) -> None:
    """A file that ends its document with `...`: a section appended after it would start a second
    document, which the check of the result (parsed again, compared) refuses."""
    folder = tmp_path / (".config/goose" if client == "goose" else ".continue")
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_text("name: c\nversion: 1.0.0\n...\n")
    [target] = install_targets(client, tmp_path, "linux", {})
    with pytest.raises(InstallError, match=r"cannot add its .* to this file safely as text; not changed"):
        plan_install(target, COMMAND)
    assert path.read_text() == "name: c\nversion: 1.0.0\n...\n"


# What export reuses: a server in each client's own shape -------------------------------------------


SERVERS: list[ServerConfig] = [
    StdioServerConfig("files", "npx", ["-y", "server", "on", "--flag"], {"TOKEN": "FAKE-0000", "N": "1"}),
    HttpServerConfig("remote", "https://mcp.example.com/mcp", {"Authorization": "Bearer FAKE-0000"}),
]


def test_servers_written_in_each_format_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("extensions:\n" + goose.render({s.name: goose.extension_of(s) for s in SERVERS}))
    assert read_client_config("goose", path, "goose").servers == SERVERS
    path.write_text("mcpServers:\n" + continue_yaml.render([continue_yaml.item_of(s) for s in SERVERS]))
    assert read_client_config("continue", path, "continue").servers == SERVERS
    with pytest.raises(goose.UnsupportedServer):
        goose.extension_of(HttpServerConfig("old", "https://x.example/sse", transport="sse"))


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"").diff()
    secrets = GOOSE_SECRETS if client == "goose" else CONTINUE_SECRETS
    assert [s for s in secrets if s in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode().splitlines())
    assert ("GITHUB_PERSONAL_ACCESS_TOKEN: ***" if client == "goose" else "apiKey: ***") in diff


@pytest.mark.parametrize("client", ["goose", "continue"])
def test_crlf_a_byte_order_mark_and_no_final_line_end_are_followed(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    before = b"\xef\xbb\xbf" + target.path.read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n")
    target.path.write_bytes(before)
    served = {"fetch": {"command": "uvx", "args": FETCH_ARGS, "env": {"FETCH_TOKEN": CONTINUE_SECRETS[2]},
              "cwd": "/srv/fetch"}, "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem",
              "/tmp"]}}  # fmt: skip
    change = plan_install(target, COMMAND, config=config_with(tmp_path, served), disable_served=True)
    assert change.moved == (("filesystem",) if client == "goose" else ("fetch",))
    apply_change(change)
    after = target.path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") and after.count(b"\n") == after.count(b"\r\n")
    read = {s.name: s for s in read_client_config(client, target.path, target.layout).servers}
    assert "mcpmanager" in read
    assert read["filesystem"].disabled if client == "goose" else "fetch" not in read  # off, or commented out
    apply_change(plan_undo(target))
    assert target.path.read_bytes() == before
