"""Continue (`~/.continue/config.yaml` and its block files, `mcpServers` lists), on Linux, macOS and
Windows: where its files are, how they are read, and the round trips on its samples of
tests/data/clients/continue (written from its documentation): import dry run and real, install with
every other byte kept, undo byte for byte, `--disable-served` (items commented out: Continue has no
switch), secrets masked, a broken file refused with its line and column, a config.json never hidden
by a new config.yaml. What every client's sample goes through is in test_contract.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpmanager.core.clients import continue_yaml
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

SECRETS = [
    "FAKE-continue-linear-0000",
    "FAKE-continue-apikey-0000",
    "FAKE-continue-fetch-0000",
    "FAKE-continue-fetchkey-0000",
]
FETCH_ARGS = ["mcp-server-fetch", "--api-key", SECRETS[3]]
NAMES = ["SQLite-MCP", "GitHub", "Linear", "Docs", "fetch"]
# mcpmanager's servers in the tests of an edited file: Continue's fetch and Goose's filesystem
SERVED = {
    "fetch": {"command": "uvx", "args": FETCH_ARGS, "env": {"FETCH_TOKEN": SECRETS[2]}, "cwd": "/srv/fetch"},
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
}


def home_with(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / "continue", home / ".continue")
    return home


def load(data: bytes | None) -> Any:
    return yaml.safe_load((data or b"").decode("utf-8"))


def config_with(tmp_path: Path, servers: dict[str, Any]) -> Config:
    path = tmp_path / "mcpmanager.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_config(path)


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_places_on_every_platform(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path)
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(home, platform, {})]
    assert [p for p in places if p[0] == "continue"] == [
        ("continue", "Continue", home / ".continue/config.yaml", "continue"),
        ("continue", "Continue (mcpServers/playwright-mcp.yaml)", home / ".continue/mcpServers/playwright-mcp.yaml",
         "continue-block"),
    ]  # fmt: skip


def test_the_environment_moves_the_files(tmp_path: Path) -> None:
    """CONTINUE_GLOBAL_DIR (the folder itself, everywhere); a relative one ignored."""
    other = tmp_path / "elsewhere"

    def place(platform: str, env: dict[str, str]) -> Path:
        [found] = [w.path for w in client_locations(tmp_path, platform, env) if w.client == "continue"]
        return found

    for platform in PLATFORMS:
        assert place(platform, {"CONTINUE_GLOBAL_DIR": str(other / "c")}) == other / "c/config.yaml"
    assert place("linux", {"CONTINUE_GLOBAL_DIR": "rel"}) == tmp_path / ".continue/config.yaml"


def test_block_files_are_read_but_never_install_targets(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    assert [t.path for t in install_targets("continue", home, "linux", {})] == [home / ".continue/config.yaml"]


# Reading -------------------------------------------------------------------------------------------


def test_items_as_mcpmanager_servers() -> None:
    path = DATA / "continue" / "config.yaml"
    read = read_client_config("continue", path, "continue")
    token = "${{ secrets.GITHUB_PERSONAL_ACCESS_TOKEN }}"
    assert read.servers == [
        StdioServerConfig("SQLite-MCP", "npx", ["-y", "mcp-sqlite", "/path/to/your/database.db"]),
        StdioServerConfig(
            "GitHub", "npx", ["-y", "@modelcontextprotocol/server-github"], {"GITHUB_PERSONAL_ACCESS_TOKEN": token}
        ),
        HttpServerConfig("Linear", "https://mcp.linear.example/mcp", {"Authorization": f"Bearer {SECRETS[0]}"}),
        HttpServerConfig("Docs", "https://docs.example.com/sse", transport="sse"),
        StdioServerConfig("fetch", "uvx", FETCH_ARGS, {"FETCH_TOKEN": SECRETS[2]}, "/srv/fetch"),
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


def test_a_broken_file_gives_its_line_and_column_and_changes_nothing(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("continue", home, "linux", {})
    target.path.write_bytes(target.path.read_bytes().replace(b"cwd: /srv/fetch", b"cwd: [/srv/fetch"))
    original = files_under(home)
    read = read_client_config("continue", target.path, target.layout)
    assert read.servers == [] and len(read.problems) == 1
    assert read.problems[0].startswith(f"{target.path}:53:"), read.problems
    assert ": invalid YAML: " in read.problems[0]
    config = tmp_path / "mcpmanager" / "config.json"
    added = [a.name for a in plan_import("continue", config, home, "linux", {}).added]
    assert added == ["Browser-search"]  # Continue's block file still reads
    with pytest.raises(InstallError, match=r"config\.yaml:53:\d+: invalid YAML: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match=r"config\.yaml:53:\d+: invalid YAML"):
        plan_undo(target)
    assert inspect(target).problem is not None
    assert files_under(home) == original and not config.exists()


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    names = [*NAMES, "Browser-search"]
    plan = plan_import("continue", config, home, platform, {})
    assert [a.name for a in plan.added] == names and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == names
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == names
    assert saved["fetch"] == {
        "command": "uvx",
        "args": FETCH_ARGS,
        "env": {"FETCH_TOKEN": SECRETS[2]},
        "cwd": "/srv/fetch",
    }
    assert files_under(home) == original  # the client's files are only read
    again = apply_import(plan_import("continue", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(names)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path)
    original = files_under(home)
    [target] = install_targets("continue", home, platform, {})
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after and backup is not None and backup.read_bytes() == before
    doc, was = load(after), load(before)
    added = inserted_only(before.decode(), after.decode())
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


def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("continue", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("continue", home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    diff = change.diff()
    assert [s for s in SECRETS if s in diff] == []
    apply_change(change)
    text = target.path.read_text()
    added = inserted_only(original[target.path.relative_to(home).as_posix()].decode(), text)
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


def test_undo_after_the_file_was_edited_keeps_the_edit(tmp_path: Path) -> None:
    """Undo after an edit of the file takes out only what install put in."""
    home = home_with(tmp_path)
    config = config_with(tmp_path, SERVED)
    [target] = install_targets("continue", home, "linux", {})
    original = target.path.read_text()
    apply_change(plan_install(target, COMMAND, config=config, disable_served=True))
    edit = ("diff\n", "diff2\n")
    target.path.write_text(target.path.read_text().replace(*edit))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact and undo.moved == ("fetch",)
    apply_change(undo)
    assert target.path.read_text() == original.replace(*edit)
    assert list_backups(target.path)[0].read_text() == original


# Other forms of the file ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", continue_yaml.NEW_FILE + "mcpServers:\n  - name: mcpmanager\n"),
        ("name: c\r\nmcpServers: []\r\n", "name: c\r\nmcpServers:\r\n  - name: mcpmanager\r\n"),
        ("mcpServers: [{name: a, command: x}]",
         'mcpServers: [{name: a, command: x}, {"name": "mcpmanager"'),
        ("name: c\n    # odd\nmcpServers:\n    -   name: a\n        command: x\n# end",
         "name: c\n    # odd\nmcpServers:\n    -   name: a\n        command: x\n    -   name: mcpmanager\n"),
    ],
)  # fmt: skip
def test_other_forms_get_the_entry_and_undo_gives_them_back(tmp_path: Path, text: str, expected: str) -> None:
    home = tmp_path / "home"
    folder = home / ".continue"
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_bytes(text.encode())
    [target] = install_targets("continue", home, "linux", {})
    apply_change(plan_install(target, COMMAND))
    after = path.read_bytes().decode()
    assert after.startswith(expected), after
    entry = continue_yaml.bridge_of(load(after.encode()))
    assert entry["args"] == ["connect"]
    apply_change(plan_undo(target))
    assert path.read_bytes() == text.encode()


def test_config_json_is_not_replaced_by_a_new_config_yaml(tmp_path: Path) -> None:
    folder = tmp_path / ".continue"
    folder.mkdir()
    (folder / "config.json").write_text('{"models": []}')
    [target] = install_targets("continue", tmp_path, "linux", {})
    with pytest.raises(InstallError, match=r"Continue reads config\.json in this folder"):
        plan_install(target, COMMAND)
    assert not target.path.exists()


def test_what_cannot_be_turned_off_as_text_is_refused(tmp_path: Path) -> None:
    """A Continue item with an anchor used elsewhere cannot be commented out without changing the
    other value: refused, nothing written."""
    config = config_with(tmp_path, {"a": {"command": "x"}})
    text = "mcpServers:\n  - &a\n    name: a\n    command: x\nother: *a\n"
    folder = tmp_path / "continue"
    folder.mkdir()
    path = folder / "config.yaml"
    path.write_text(text)
    target = Target("continue", "continue", path, "continue")
    with pytest.raises(InstallError, match="not changed"):
        plan_install(target, COMMAND, config=config, disable_served=True)
    assert plan_install(target, COMMAND, config=config).served == ("a",)
    assert path.read_text() == text


def test_an_edit_that_would_change_more_than_it_means_to_is_refused(tmp_path: Path) -> None:
    """A file that ends its document with `...`: a section appended after it would start a second
    document, which the check of the result (parsed again, compared) refuses."""
    folder = tmp_path / ".continue"
    folder.mkdir(parents=True)
    path = folder / "config.yaml"
    path.write_text("name: c\nversion: 1.0.0\n...\n")
    [target] = install_targets("continue", tmp_path, "linux", {})
    with pytest.raises(InstallError, match=r"cannot add its .* to this file safely as text; not changed"):
        plan_install(target, COMMAND)
    assert path.read_text() == "name: c\nversion: 1.0.0\n...\n"


# What export reuses: a server in Continue's own shape ----------------------------------------------


SERVERS: list[ServerConfig] = [
    StdioServerConfig("files", "npx", ["-y", "server", "on", "--flag"], {"TOKEN": "FAKE-0000", "N": "1"}),
    HttpServerConfig("remote", "https://mcp.example.com/mcp", {"Authorization": "Bearer FAKE-0000"}),
]


def test_servers_written_as_items_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("mcpServers:\n" + continue_yaml.render([continue_yaml.item_of(s) for s in SERVERS]))
    assert read_client_config("continue", path, "continue").servers == SERVERS


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("continue", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"").diff()
    assert [s for s in SECRETS if s in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode().splitlines())
    assert "apiKey: ***" in diff


def test_crlf_a_byte_order_mark_and_no_final_line_end_are_followed(tmp_path: Path) -> None:
    home = home_with(tmp_path)
    [target] = install_targets("continue", home, "linux", {})
    before = b"\xef\xbb\xbf" + target.path.read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n")
    target.path.write_bytes(before)
    served = {"fetch": SERVED["fetch"], "fs": SERVED["filesystem"]}
    change = plan_install(target, COMMAND, config=config_with(tmp_path, served), disable_served=True)
    assert change.moved == ("fetch",)
    apply_change(change)
    after = target.path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf") and after.count(b"\n") == after.count(b"\r\n")
    read = {s.name: s for s in read_client_config("continue", target.path, target.layout).servers}
    assert "mcpmanager" in read
    assert "fetch" not in read  # commented out
    apply_change(plan_undo(target))
    assert target.path.read_bytes() == before
