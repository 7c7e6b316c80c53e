"""Codex (`~/.codex/config.toml`, `$CODEX_HOME/config.toml`), on Linux, macOS and Windows: where its
file is, how its `[mcp_servers.NAME]` tables are read (tomllib), and the round trips on the sample
file of tests/data/clients/codex (written from Codex's documentation): import dry run and real,
install appending a table with every byte of the file kept, undo byte for byte, `--disable-served`
with Codex's own `enabled = false`, secrets masked, a broken file refused with its line."""

from __future__ import annotations

import difflib
import json
import shutil
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpmanager.core.clients import codex_toml
from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.codex_toml import OFF_LINE
from mcpmanager.core.clients.errors import ClientNotFound, InstallError
from mcpmanager.core.clients.importing import ImportPlan, plan_import
from mcpmanager.core.clients.install import inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import find_client_configs, read_client_config
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from mcpmanager.core.engine.control import Control

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "clients" / "codex" / "config.toml"
RELATIVE = ".codex/config.toml"
PLATFORMS = ["linux", "darwin", "win32"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
FAKE_SECRETS = ["ghp_FAKE00000000000000000000000000codex", "FAKE-linear-token-0000"]
NAMES = ["context7", "github", "docs-search", "figma", "linear", "time"]


def home_with_codex(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    shutil.copyfile(SAMPLE, home / RELATIVE)
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def toml(data: bytes) -> dict[str, Any]:
    return tomllib.loads(data.decode("utf-8"))


def apply_import(plan: ImportPlan, config: Path) -> ImportPlan:
    added, skipped = anyio.run(Control(config).import_servers, plan.candidates)
    return replace(plan, added=added, skipped=skipped)


def inserted_only(before: str, after: str) -> str:
    """The text install put in, after checking every character of `before` is still in `after`, in order."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, before[i1:i2], after[j1:j2])
        if tag == "insert":
            added.append(after[j1:j2])
    return "".join(added)


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = {w.client: (w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})}
    assert places["codex"] == ("Codex", tmp_path / ".codex" / "config.toml", "codex")
    home = home_with_codex(tmp_path)
    found = [(c.client, c.label, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("codex", "Codex", home / RELATIVE, NAMES)]


def test_codex_home_moves_the_file(tmp_path: Path) -> None:
    """`CODEX_HOME` is Codex's folder itself (no `.codex` under it); case-insensitive on Windows."""
    other = tmp_path / "codex-home"
    for platform, key in (("linux", "CODEX_HOME"), ("darwin", "CODEX_HOME"), ("win32", "codex_home")):
        places = {w.client: w.path for w in client_locations(tmp_path, platform, {key: str(other)})}
        assert places["codex"] == other / "config.toml", platform
    relative = {w.client: w.path for w in client_locations(tmp_path, "linux", {"CODEX_HOME": "rel/dir"})}
    assert relative["codex"] == tmp_path / ".codex" / "config.toml"  # not a folder one can know
    other.mkdir()
    [target] = install_targets("codex", tmp_path, "linux", {"CODEX_HOME": str(other)})
    assert target.path == other / "config.toml"


def test_not_found_names_the_place_and_a_bare_folder_is_enough(tmp_path: Path) -> None:
    with pytest.raises(ClientNotFound, match=r"Codex not found \(looked at .*\.codex.config\.toml\)"):
        install_targets("codex", tmp_path, "linux", {})
    (tmp_path / ".codex").mkdir()  # Codex ran, no config.toml yet
    [target] = install_targets("codex", tmp_path, "win32", {})
    apply_change(plan_install(target, COMMAND))
    assert (
        target.path.read_text()
        == '[mcp_servers.mcpmanager]\ncommand = "/opt/mcpmanager/bin/mcpmanager"\nargs = ["connect"]\n'
    )
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Reading -------------------------------------------------------------------------------------------


def test_the_tables_as_mcpmanager_servers() -> None:
    read = read_client_config("codex", SAMPLE, "codex", home=Path("/home/u"))
    github_env = {"GITHUB_PERSONAL_ACCESS_TOKEN": FAKE_SECRETS[0], "GITHUB_TOOLSETS": "repos,issues"}
    github_args = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]
    assert read.servers == [
        StdioServerConfig("context7", "npx", ["-y", "@upstash/context7-mcp"], start_timeout=20),
        StdioServerConfig("github", "docker", github_args, github_env),
        StdioServerConfig("docs-search", "uvx", ["mcp-server-fetch"], {"FETCH_TIMEOUT": "30"}, "/srv/docs"),
        HttpServerConfig("figma", "https://mcp.figma.example/mcp", {"X-Figma-Region": "us-east-1"}),
        HttpServerConfig(
            "linear", "https://mcp.linear.example/mcp", {"Authorization": f"Bearer {FAKE_SECRETS[1]}"}, disabled=True
        ),
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone=Europe/Paris"]),
    ]
    assert read.problems == [
        f"{SAMPLE}:16: mcp_servers.github.env_vars: variables Codex forwards from its own environment; not read "
        "(add them to env in mcpmanager)",
        f"{SAMPLE}:29: mcp_servers.\"docs search\": not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        "imported as 'docs-search'",
        f"{SAMPLE}:36: mcp_servers.figma.bearer_token_env_var: a bearer token Codex reads from its environment; "
        "not read (add an Authorization header in mcpmanager)",
        f"{SAMPLE}:41: mcp_servers.linear.env_http_headers: header values Codex reads from its environment; not "
        "read (add the headers in mcpmanager)",
    ]
    assert not [secret for secret in FAKE_SECRETS for line in read.problems if secret in line]


def test_entries_that_do_not_read_and_other_forms(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[mcp_servers]\n"
        'dotted.command = "a"\n'
        'inline = { command = "b", args = ["x"], env = { N = 1 } }\n'
        "[mcp_servers.nothing]\n"
        "startup_timeout_ms = 5000\n"
        "[mcp_servers.bad]\n"
        'command = "c"\n'
        'args = "not a list"\n'
    )
    read = read_client_config("codex", path, "codex")
    assert read.servers == [StdioServerConfig("dotted", "a"), StdioServerConfig("inline", "b", ["x"], {"N": "1"})]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        'mcp_servers.nothing: needs "command" (stdio) or "url" (http) (server \'nothing\' not imported)',
        "mcp_servers.bad.args: expected an array of strings, got string (server 'bad' not imported)",
    ]
    assert read.problems[0].startswith(f"{path}:4: ") and read.problems[1].startswith(f"{path}:6: ")


def test_a_broken_file_gives_its_line_and_changes_nothing(tmp_path: Path) -> None:
    home = home_with_codex(tmp_path)
    path = home / RELATIVE
    path.write_bytes(SAMPLE.read_bytes().replace(b'command = "npx"', b"command = npx"))
    original = files_under(home)
    read = read_client_config("codex", path, "codex")
    assert read.servers == [] and len(read.problems) == 1
    assert read.problems[0].startswith(f"{path}:11:11: invalid TOML: ")
    config = tmp_path / "mcpmanager" / "config.json"
    assert plan_import("codex", config, home, "linux", {}).added == []
    [target] = install_targets("codex", home, "linux", {})
    with pytest.raises(InstallError, match=r"config\.toml:11:11: invalid TOML: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match=r":11:11: invalid TOML"):
        plan_undo(target)
    assert inspect(target).problem is not None
    assert files_under(home) == original and not config.exists()


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with_codex(tmp_path)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("codex", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    assert saved["figma"] == {
        "type": "http",
        "url": "https://mcp.figma.example/mcp",
        "headers": {"X-Figma-Region": "us-east-1"},
    }
    assert saved["linear"]["disabled"] is True and saved["context7"]["startTimeout"] == 20
    assert load_config(config).servers["github"].env["GITHUB_PERSONAL_ACCESS_TOKEN"] == FAKE_SECRETS[0]  # type: ignore[union-attr]
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("codex", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with_codex(tmp_path)
    original = files_under(home)
    [target] = install_targets("codex", home, platform, {})
    assert target.path == home / RELATIVE
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = toml(after)
    assert doc["mcp_servers"].pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert doc == toml(before)  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))
    table = (
        '[mcp_servers.mcpmanager]\ncommand = "/opt/mcpmanager/bin/mcpmanager"\nargs = ["connect", "--mode", "direct"]'
    )
    assert added == f"\n{table}\n"
    assert after.startswith(before)  # appended: every original character in place
    assert backup is not None and backup.read_bytes() == before and backup.parent == target.path.parent
    assert inspect(target).mode == "direct"

    again = plan_install(target, COMMAND, "direct")
    assert not again.changed and apply_change(again) is None

    other = plan_install(target, COMMAND, "discovery")  # another mode: the table replaced in place
    assert toml(other.after or b"")["mcp_servers"]["mcpmanager"]["args"] == ["connect", "--mode", "discovery"]
    assert (other.after or b"").startswith(before) and len(other.after or b"") == len(after) + 3

    undo = plan_undo(target)
    assert undo.changed and undo.exact and undo.restore == backup
    apply_change(undo)
    assert files_under(home) == original  # byte for byte, and the backup gone
    assert inspect(target).mode is None


def test_crlf_a_byte_order_mark_and_no_final_line_end_are_followed(tmp_path: Path) -> None:
    home = home_with_codex(tmp_path)
    path = home / RELATIVE
    before = b"\xef\xbb\xbf" + SAMPLE.read_bytes().replace(b"\n", b"\r\n").rstrip(b"\r\n")
    path.write_bytes(before)
    [target] = install_targets("codex", home, "linux", {})
    apply_change(plan_install(target, COMMAND))
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == after.count(b"\r\n")
    assert (
        after[len(before) :]
        == b'\r\n\r\n[mcp_servers.mcpmanager]\r\ncommand = "/opt/mcpmanager/bin/mcpmanager"\r\nargs = ["connect"]\r\n'
    )
    assert [s.name for s in read_client_config("codex", path, "codex").servers] == [*NAMES, "mcpmanager"]
    apply_change(plan_undo(target))
    assert path.read_bytes() == before


def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path) -> None:
    """Codex's own switch: `enabled = false` in each served server's table; undo byte for byte."""
    home = home_with_codex(tmp_path)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("codex", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("codex", home, "linux", {})

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    served = ["context7", "github", "docs search", "figma", "time"]  # linear is off in Codex already
    assert list(change.moved) == served
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    apply_change(change)
    text = target.path.read_text()
    doc = toml(target.path.read_bytes())
    assert [n for n, s in doc["mcp_servers"].items() if s.get("enabled", True)] == ["mcpmanager"]
    assert text.count(OFF_LINE) == len(served)
    assert f'[mcp_servers."docs search"]\n{OFF_LINE}\ncommand = "uvx"' in text
    added = inserted_only(SAMPLE.read_text(), text)  # nothing of the user's replaced or deleted
    assert added.count("enabled = false") == len(served)
    assert inspect(target, config, home).disabled == tuple(served)

    apply_change(plan_undo(target))
    assert files_under(home) == original


def test_an_enabled_line_is_replaced_and_forms_that_cannot_take_the_line_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    path = home / RELATIVE
    path.write_text('[mcp_servers.time]\ncommand = "uvx"\nenabled = true # on\n')
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}}))
    config = load_config(config_path)
    [target] = install_targets("codex", home, "linux", {})
    apply_change(plan_install(target, COMMAND, config=config, disable_served=True))
    assert path.read_text().startswith(f'[mcp_servers.time]\ncommand = "uvx"\n{OFF_LINE}\n\n[mcp_servers.mcpmanager]')
    apply_change(plan_undo(target))
    assert path.read_text() == '[mcp_servers.time]\ncommand = "uvx"\nenabled = true # on\n'

    inline = 'mcp_servers = { time = { command = "uvx" } }\n'
    path.write_text(inline)
    with pytest.raises(InstallError, match=r"not written as a \[mcp_servers.time\] table"):
        plan_install(target, COMMAND, config=config, disable_served=True)
    with pytest.raises(InstallError, match="cannot add its table to this file safely"):
        plan_install(target, COMMAND)  # an inline mcp_servers cannot take a [mcp_servers.mcpmanager] table
    assert path.read_text() == inline


def test_undo_after_the_file_was_edited_keeps_the_edit(tmp_path: Path) -> None:
    home = home_with_codex(tmp_path)
    path = home / RELATIVE
    config_path = tmp_path / "config.json"
    config_path.write_text(
        json.dumps(
            {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Paris"]}}}
        )
    )
    [target] = install_targets("codex", home, "linux", {})
    apply_change(plan_install(target, COMMAND, config=load_config(config_path), disable_served=True))
    path.write_text(path.read_text().replace('model = "gpt-5-codex"', 'model = "gpt-5.1-codex"'))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact and undo.moved == ("time",)
    apply_change(undo)
    assert path.read_text() == SAMPLE.read_text().replace('model = "gpt-5-codex"', 'model = "gpt-5.1-codex"')
    assert list_backups(path)[0].read_bytes() == SAMPLE.read_bytes()


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    """Every line of the sample in a diff (all of it removed): its env and http_headers secrets masked."""
    home = home_with_codex(tmp_path)
    [target] = install_targets("codex", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert 'GITHUB_PERSONAL_ACCESS_TOKEN = "***"' in diff and 'http_headers = { Authorization = "***" }' in diff


def test_a_server_codex_has_turned_off_is_not_turned_off_again(tmp_path: Path) -> None:
    """linear is `enabled = false` in Codex: even served by mcpmanager, it is neither named nor touched
    (its own line stays, so no undo could turn it on)."""
    home = home_with_codex(tmp_path)
    config_path = tmp_path / "config.json"
    headers = {"Authorization": f"Bearer {FAKE_SECRETS[1]}"}
    linear = {"type": "http", "url": "https://mcp.linear.example/mcp", "headers": headers}
    config_path.write_text(json.dumps({"mcpServers": {"linear": linear}}))
    config = load_config(config_path)
    [target] = install_targets("codex", home, "linux", {})
    assert plan_install(target, COMMAND, config=config).served == ()
    change = plan_install(target, COMMAND, config=config, disable_served=True)
    assert change.moved == () and OFF_LINE.encode() not in (change.after or b"")
    assert inspect(target, config, home).served == ()


NESTED = """[mcp_servers.a]
command = "uvx"
matrix = [
  ["nested"],  # a line starting with [ inside a value
  '''[multi
[line]''',
]
enabled = true

[mcp_servers.b]
command = "npx"
args = [
  ["nested"],
]
"""


def test_a_nested_array_line_does_not_end_a_table() -> None:
    found = [(parts, start, end) for parts, start, end in codex_toml.tables(NESTED)]
    assert found == [(["mcp_servers", "a"], 0, 9), (["mcp_servers", "b"], 9, 14)]


def test_the_enabled_line_after_a_nested_array_is_replaced(tmp_path: Path) -> None:
    """Before, the `  ["nested"],` line ended `[mcp_servers.a]`: install missed its `enabled` line and,
    writing a second one, refused (the re-parse check); now the line is replaced and undo restores it."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    path = home / RELATIVE
    path.write_text(NESTED)
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"mcpServers": {"a": {"command": "uvx"}}}))
    [target] = install_targets("codex", home, "linux", {})
    change = plan_install(target, COMMAND, config=load_config(config_path), disable_served=True)
    assert change.moved == ("a",)
    apply_change(change)
    assert path.read_text().count("enabled") == 1 and toml(path.read_bytes())["mcp_servers"]["a"]["enabled"] is False
    apply_change(plan_undo(target))
    assert path.read_text() == NESTED
