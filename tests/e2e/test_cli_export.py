"""`mcpmanager export` as a user runs it: on a copy of a fixture home (`HOME` pointed at it), with
`MCPMANAGER_HOME` for mcpmanager's own config and the test's own keyring. Every case runs twice: as
a real subprocess (`python -m mcpmanager …`) and through `commands.export.run` in this process."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from mcpmanager.commands import export
from mcpmanager.core.vault.store import Vault
from tests.helpers.client_samples import files_under, parse, user_home
from tests.helpers.vaults import current_keyring_env

CURSOR = ".cursor/mcp.json"
VSCODE = ".config/Code/User/mcp.json"
TOKEN = "FAKE-wiki-token-0000"
GREETING = "open-sesame-4f9a2c"  # no secret's shape: only the keyring says it is one
SERVERS: dict[str, Any] = {
    "clock": {"command": "uvx", "args": ["mcp-server-time"]},
    "wiki": {"type": "http", "url": "https://wiki.example/mcp", "headers": {"Authorization": f"Bearer {TOKEN}"}},
    "greeter": {"command": "greet", "env": {"GREETING": "${keyring:greeter}"}},
}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[..., Result]


def _environment(user: Path, manager: Path) -> dict[str, str]:
    return {
        "HOME": str(user),
        "MCPMANAGER_HOME": str(manager),
        "PATH": os.environ.get("PATH", ""),
        **current_keyring_env(),
    }


def _subprocess(user: Path, manager: Path, *args: str) -> Result:
    done = subprocess.run(
        [sys.executable, "-m", "mcpmanager", *args],
        env=_environment(user, manager),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def _in_process(user: Path, manager: Path, *args: str) -> Result:
    parser = argparse.ArgumentParser(prog="mcpmanager")
    export.add_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, _environment(user, manager), clear=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = export.run(parser.parse_args(list(args)))
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture(params=["subprocess", "in-process"])
def mcpmanager(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runner]:
    runner = _subprocess if request.param == "subprocess" else _in_process

    def run(*args: str) -> Result:
        return runner(tmp_path / "user", tmp_path / "manager", *args)

    yield run


def write_config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    config = tmp_path / "manager" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"mcpServers": servers}))
    return config


def test_export_preview_write_again_and_undo(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    write_config(tmp_path, SERVERS)
    original = files_under(home)
    path = home / CURSOR
    skipped = (
        "  ! greeter: env GREETING refers to the keyring, which Cursor cannot read: not exported "
        f"(--with-secrets writes the secret into {path})"
    )

    dry = mcpmanager("export", "--to", "cursor", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[:4] == [f"Cursor ({path}):", "  + clock", "  + wiki", skipped]
    assert lines[4:6] == [f"--- {path}", f"+++ {path} (export)"]
    assert '+        "Authorization": "***"' in lines and TOKEN not in dry.stdout
    assert lines[-1] == f"Dry run: {path} was not changed (2 servers would be written)."
    assert files_under(home) == original

    done = mcpmanager("export", "--to", "cursor")
    assert done.returncode == 0, done.stderr
    [backup] = path.parent.glob("mcp.json.mcpmanager-export-*.bak")
    assert done.stdout.splitlines()[-2:] == [
        f"Exported 2 servers to Cursor ({path}) (backup of the file before: {backup}).",
        "Restart Cursor to load them. `mcpmanager export --to cursor --undo` reverts this.",
    ]
    servers = parse(path)["mcpServers"]
    assert isinstance(servers, dict)
    assert servers["clock"] == SERVERS["clock"]
    assert servers["wiki"] == {"url": "https://wiki.example/mcp", "headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert "greeter" not in servers

    again = mcpmanager("export", "--to", "cursor")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        f"Cursor ({path}):",
        "  = clock: Cursor has it already as 'clock'",
        "  = wiki: Cursor has it already as 'wiki'",
        skipped,
        f"Nothing to write to {path}.",
    ]

    undo = mcpmanager("export", "--to", "cursor", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert undo.stdout.splitlines()[-1] == f"Restored {path} byte for byte from {backup}."
    assert files_under(home) == original
    nothing = mcpmanager("export", "--to", "cursor", "--undo")
    assert nothing.returncode == 0
    assert nothing.stdout == f"mcpmanager has not exported to {path} (no record of it): nothing to undo\n"


def test_with_secrets_writes_the_keyring_s_value_masked_in_the_preview(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    write_config(tmp_path, SERVERS)
    Vault().set("greeter", GREETING)
    path = home / VSCODE
    done = mcpmanager("export", "--to", "vscode", "--servers", "greeter", "--with-secrets")
    assert done.returncode == 0, done.stderr
    assert GREETING not in done.stdout
    assert done.stdout.splitlines()[0].startswith("keyring: keyrings.alt.file.PlaintextKeyring")
    assert '+\t\t\t\t"GREETING": "***"' in done.stdout.splitlines()
    assert (
        f"Secrets from the keyring go into {path} in plain text (masked above): greeter: env GREETING."
        in done.stdout.splitlines()
    )
    servers = parse(path)["servers"]
    assert isinstance(servers, dict)
    assert servers["greeter"] == {"type": "stdio", "command": "greet", "args": [], "env": {"GREETING": GREETING}}


def test_servers_by_name_and_commas(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    write_config(tmp_path, {**SERVERS, "more": {"command": "more"}})
    done = mcpmanager("export", "--to", "claude-code", "--servers", "more,clock", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [f"Claude Code ({home / '.claude.json'}):", "  + clock", "  + more"]


@pytest.mark.parametrize(
    ("args", "servers", "expected"),
    [
        (
            ["export", "--to", "cursor", "--servers", "clock", "nope,wiki", "zzz"],
            SERVERS,
            "mcpmanager: no server 'nope', 'zzz' in {config} (it has: clock, wiki, greeter)",
        ),
        (["export", "--to", "cursor"], {}, "mcpmanager: no servers in {config}: nothing to export"),
        (
            ["export", "--to", "emacs"],
            SERVERS,
            "mcpmanager: unknown client 'emacs' (expected one of: {clients})",
        ),
        (
            ["export", "--to", "windsurf"],
            SERVERS,
            "mcpmanager: Windsurf not found (looked at {home}/.codeium/windsurf/mcp_config.json)",
        ),
        (
            ["export", "--to", "cursor", "--undo", "--replace"],
            SERVERS,
            "mcpmanager: --undo takes neither --servers, --replace nor --with-secrets: it reverts the last export",
        ),
        (
            ["export", "--to", "cursor", "--config", "{tmp}/nowhere.json"],
            SERVERS,
            "mcpmanager: config file not found: {tmp}/nowhere.json",
        ),
    ],
)
def test_bad_usage_exits_2_with_one_line_and_writes_nothing(
    mcpmanager: Runner, tmp_path: Path, args: list[str], servers: dict[str, Any], expected: str
) -> None:
    from mcpmanager.core.clients.locations import CLIENTS

    home = user_home(tmp_path)
    config = write_config(tmp_path, servers)
    before = files_under(tmp_path)
    result = mcpmanager(*(arg.format(tmp=tmp_path) for arg in args))
    assert result.returncode == 2
    clients = ", ".join(CLIENTS)
    assert result.stderr.splitlines() == [expected.format(config=config, home=home, clients=clients, tmp=tmp_path)]
    assert result.stdout == ""
    assert files_under(tmp_path) == before


DATA = Path(__file__).resolve().parents[1] / "data" / "clients"


@pytest.mark.parametrize(
    ("client", "sample", "relative"),
    [
        ("codex", "codex/config.toml", ".codex/config.toml"),
        ("goose", "goose/config.yaml", ".config/goose/config.yaml"),
        ("zed", "zed/settings.json", ".config/zed/settings.json"),
        ("copilot-cli", "copilot-cli/mcp-config.json", ".copilot/mcp-config.json"),
        ("opencode", "opencode/opencode.json", ".config/opencode/opencode.json"),
        ("opencode", "opencode-v2/opencode.jsonc", ".config/opencode/opencode.jsonc"),
    ],
)
def test_export_and_undo_in_toml_yaml_and_jsonc(
    mcpmanager: Runner, tmp_path: Path, client: str, sample: str, relative: str
) -> None:
    path = tmp_path / "user" / relative
    path.parent.mkdir(parents=True)
    original = (DATA / sample).read_bytes()
    path.write_bytes(original)
    write_config(tmp_path, SERVERS)
    done = mcpmanager("export", "--to", client, "--servers", "clock,wiki")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:3] == ["  + clock", "  + wiki"]
    assert TOKEN not in done.stdout
    matcher = difflib.SequenceMatcher(None, original, path.read_bytes(), autojunk=False)
    assert {tag for tag, *_ in matcher.get_opcodes()} == {"equal", "insert"}  # every byte kept, lines added
    undo = mcpmanager("export", "--to", client, "--undo")
    assert undo.returncode == 0, undo.stderr
    assert path.read_bytes() == original
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_continue_s_config_json_is_not_hidden_behind_a_new_config_yaml(mcpmanager: Runner, tmp_path: Path) -> None:
    folder = tmp_path / "user" / ".continue"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"models": [{"title": "mine", "provider": "ollama", "model": "llama3"}]}\n')
    write_config(tmp_path, SERVERS)
    before = files_under(tmp_path)
    done = mcpmanager("export", "--to", "continue", "--servers", "clock")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"mcpmanager: {folder / 'config.yaml'}: Continue reads config.json in this folder, and a new config.yaml "
        "would take its place: move your settings to config.yaml first (Continue's 'Migrating Config to YAML'); "
        "not changed"
    ]
    assert files_under(tmp_path) == before


def test_goose_undo_after_goose_rewrote_its_file_puts_the_replaced_extension_back(
    mcpmanager: Runner, tmp_path: Path
) -> None:
    path = tmp_path / "user" / ".config" / "goose" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes((DATA / "goose" / "config.yaml").read_bytes())
    slack = yaml.safe_load(path.read_text())["extensions"]["slack"]
    write_config(tmp_path, {"slack": {"command": "uvx", "args": ["mine"]}})
    done = mcpmanager("export", "--to", "goose", "--replace")
    assert done.returncode == 0, done.stderr
    rewritten = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump(rewritten, sort_keys=False))  # as Goose writes it: 2-space indentation

    undo = mcpmanager("export", "--to", "goose", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert yaml.safe_load(path.read_text()) == {**rewritten, "extensions": {**rewritten["extensions"], "slack": slack}}


@pytest.mark.parametrize(("mode", "who"), [(0o644, "its group and other users"), (0o640, "its group"), (0o600, "")])
def test_with_secrets_says_who_else_can_read_the_file(mcpmanager: Runner, tmp_path: Path, mode: int, who: str) -> None:
    home = user_home(tmp_path)
    write_config(tmp_path, SERVERS)
    Vault().set("greeter", GREETING)
    path = home / CURSOR
    path.chmod(mode)
    done = mcpmanager("export", "--to", "cursor", "--servers", "greeter", "--with-secrets")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("Warning:")]
    expected = (
        f"Warning: {path} can be read by {who} too, and so can these secrets (`chmod go-r {path}` keeps them to you; "
        "mcpmanager leaves the file's mode as it is)."
    )
    assert warnings == ([expected] if who else [])
    assert path.stat().st_mode & 0o777 == mode
