"""`mcpmanager import` and `mcpmanager install` as a user runs them: on a copy of a fixture home
(`HOME` pointed at it), with `MCPMANAGER_HOME` for mcpmanager's own files. Every case runs twice:
as a real subprocess (`python -m mcpmanager …`) and through `commands.clients.run` in this process,
with the same environment, so the command module is covered whatever the entry point."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

from mcpmanager.commands import clients
from mcpmanager.core.clients.backups import list_backups
from mcpmanager.core.clients.install import STASH_KEY
from mcpmanager.core.system.own_command import mcpmanager_command
from tests.helpers.client_samples import files_under, parse, user_home

CURSOR = ".cursor/mcp.json"
VSCODE = ".config/Code/User/mcp.json"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[..., Result]


def _environment(user: Path, manager: Path) -> dict[str, str]:
    # Only these: no XDG_CONFIG_HOME, APPDATA or CLAUDE_CONFIG_DIR from the machine running the tests.
    return {"HOME": str(user), "MCPMANAGER_HOME": str(manager), "PATH": os.environ.get("PATH", "")}


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
    clients.add_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, _environment(user, manager), clear=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = clients.run(parser.parse_args(list(args)))
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture(params=["subprocess", "in-process"])
def mcpmanager(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runner]:
    runner = _subprocess if request.param == "subprocess" else _in_process

    def run(*args: str, home: Path | None = None) -> Result:
        return runner(home or tmp_path / "user", tmp_path / "manager", *args)

    yield run


# import -------------------------------------------------------------------------------------------


def test_import_dry_run_then_import(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    config = tmp_path / "manager" / "config.json"
    dry = mcpmanager("import", "--from", "vscode", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        f"VS Code: {home / VSCODE}",
        "  + github",
        "  + perplexity",
        "  + playwright",
        "  + fetch",
        "  + everything",
        f"VS Code (settings.json): {home / '.config/Code/User/settings.json'}",
        "  + sqlite",
        "  + memory",
        f"7 servers would be added to {config}. Nothing was changed (--dry-run).",
    ]
    problems = dry.stderr.splitlines()
    assert len(problems) == 3 and all(line.startswith(f"mcpmanager: {home}") for line in problems)
    assert "needs input 'github-token'" in problems[0]
    assert not config.exists()

    done = mcpmanager("import", "--from", "vscode")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"7 servers added to {config}. A running mcpmanager picks them up at once."
    servers = json.loads(config.read_text())["mcpServers"]
    assert list(servers) == ["github", "perplexity", "playwright", "fetch", "everything", "sqlite", "memory"]

    again = mcpmanager("import", "--from", "vscode")
    assert again.returncode == 0
    assert "  = github: already in mcpmanager as 'github'" in again.stdout
    assert again.stdout.splitlines()[-1] == f"Nothing to add to {config}; 7 skipped."


def test_import_renames_a_taken_name_and_skips_identical_ones(mcpmanager: Runner, tmp_path: Path) -> None:
    user_home(tmp_path)
    config = tmp_path / "manager" / "config.json"
    config.parent.mkdir()
    mine = {
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
        "ctx": {"url": "https://mcp.context7.com/mcp", "headers": {"CONTEXT7_API_KEY": "ctx7sk-FAKE-0000-cursor"}},
    }
    config.write_text(json.dumps({"mcpServers": mine, "proxy": {"mode": "direct"}}))
    result = mcpmanager("import", "--from", "cursor")
    assert result.returncode == 0, result.stderr
    assert "  + time (as 'time-2': 'time' is taken by a different server)" in result.stdout
    assert "  = context7: already in mcpmanager as 'ctx'" in result.stdout
    saved = json.loads(config.read_text())
    assert list(saved["mcpServers"]) == ["time", "ctx", "time-2", "sentry", "linear", "notion"]
    assert saved["proxy"] == {"mode": "direct"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["import", "--from", "emacs"],
            "mcpmanager: unknown client 'emacs' (expected one of: claude-desktop, "
            "cursor, vscode, vscode-insiders, claude-code, windsurf, gemini-cli, codex, zed, cline, lm-studio, goose, "
            "continue, copilot-cli, opencode)",
        ),
        (["import", "--from", "cursor"], "mcpmanager: no Cursor config found (looked at {home}/.cursor/mcp.json)"),
        (["install", "--client", "cursor"], "mcpmanager: Cursor not found (looked at {home}/.cursor/mcp.json)"),
        (
            ["install", "--client", "vscode", "--undo", "--mode", "direct"],
            "mcpmanager: --undo takes neither --mode nor --disable-served: it reverts the last install",
        ),
    ],
)
def test_bad_usage_exits_2_with_one_line(mcpmanager: Runner, tmp_path: Path, args: list[str], expected: str) -> None:
    home = tmp_path / "user"
    home.mkdir()
    if "--undo" in args:
        (home / ".config/Code/User").mkdir(parents=True)  # VS Code is there: the usage is what is wrong
    result = mcpmanager(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [expected.format(home=home)]
    assert result.stdout == ""
    assert files_under(tmp_path) == {}  # nothing written anywhere


def test_a_broken_mcpmanager_config_is_refused_and_untouched(mcpmanager: Runner, tmp_path: Path) -> None:
    user_home(tmp_path)
    config = tmp_path / "manager" / "config.json"
    config.parent.mkdir()
    config.write_text('{"mcpServers": {"a": {"command": "x",}}}')
    before = files_under(tmp_path)
    for args in (["import", "--from", "cursor"], ["install", "--client", "cursor", "--disable-served"]):
        result = mcpmanager(*args)
        assert result.returncode == 2
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"mcpmanager: {config}:1:38: invalid JSON")
        assert files_under(tmp_path) == before


# install ------------------------------------------------------------------------------------------


def test_install_preview_write_again_and_undo(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    original = files_under(home)
    path = home / CURSOR

    dry = mcpmanager("install", "--client", "cursor", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert f'+      "command": {json.dumps(mcpmanager_command()[0])},' in dry.stdout
    assert dry.stdout.splitlines()[-1] == f"Dry run: {path} was not changed."
    assert files_under(home) == original

    done = mcpmanager("install", "--client", "cursor", "--mode", "direct")
    assert done.returncode == 0, done.stderr
    [backup] = list_backups(path)
    assert f"Installed mcpmanager in Cursor ({path}), direct mode (backup of the file before: {backup})." in done.stdout
    entry = parse(path)["mcpServers"]["mcpmanager"]  # type: ignore[index]
    command = mcpmanager_command()
    assert entry == {"command": command[0], "args": [*command[1:], "connect", "--mode", "direct"]}
    assert Path(command[0]).is_absolute()
    assert backup.read_bytes() == original[CURSOR]

    installed = files_under(home)
    again = mcpmanager("install", "--client", "cursor", "--mode", "direct")
    assert again.returncode == 0
    assert again.stdout.splitlines() == [
        f"mcpmanager is already installed in Cursor ({path}), direct mode: nothing to change."
    ]
    assert files_under(home) == installed

    undo = mcpmanager("install", "--client", "cursor", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert undo.stdout.splitlines()[-1] == f"Restored {path} byte for byte from {backup}."
    assert files_under(home) == original
    nothing = mcpmanager("install", "--client", "cursor", "--undo")
    assert nothing.returncode == 0
    assert nothing.stdout.splitlines() == [f"mcpmanager is not installed in {path}: nothing to undo"]


def test_import_then_install_disabling_the_served_servers_then_undo(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    original = files_under(home)
    path = home / ".claude.json"
    assert mcpmanager("import", "--from", "claude-code").returncode == 0

    offer = mcpmanager("install", "--client", "claude-code", "--dry-run")
    assert "Also served by mcpmanager, so their tools load twice in Claude Code: git, docs, " in offer.stdout
    assert "`mcpmanager install --client claude-code --disable-served` turns them off there." in offer.stdout
    assert "FAKE-docs-token-0000" not in offer.stdout  # the preview masks secrets

    done = mcpmanager("install", "--client", "claude-code", "--disable-served")
    assert done.returncode == 0, done.stderr
    assert "Turned off there, since mcpmanager serves them: git, docs, postgres (project /home/alice/src/webapp)" in (
        done.stdout
    )
    doc = parse(path)
    assert list(doc["mcpServers"]) == ["mcpmanager"]  # type: ignore[call-overload]
    assert list(doc[STASH_KEY]) == ["git", "docs"]  # type: ignore[call-overload]
    assert doc["numStartups"] == 57 and doc["oauthAccount"] == {"emailAddress": "alice@example.invalid"}

    undo = mcpmanager("install", "--client", "claude-code", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert files_under(home) == original


def test_undo_after_the_client_rewrote_its_file_keeps_its_changes(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path)
    path = home / ".claude.json"
    assert mcpmanager("install", "--client", "claude-code").returncode == 0
    path.write_text(path.read_text().replace('"numStartups": 57', '"numStartups": 58'))
    undo = mcpmanager("install", "--client", "claude-code", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"{path} was edited since mcpmanager was installed: your edits are kept" in undo.stdout
    doc = parse(path)
    assert doc["numStartups"] == 58 and "mcpmanager" not in doc["mcpServers"]  # type: ignore[operator]


def test_install_into_a_file_that_does_not_read_exits_2_and_changes_nothing(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path, "broken")
    before = files_under(tmp_path)
    result = mcpmanager("install", "--client", "claude-desktop")
    assert result.returncode == 2
    path = home / ".config/Claude/claude_desktop_config.json"
    assert result.stderr.splitlines() == [f"mcpmanager: {path}:6:7: invalid JSON: Expecting ',' delimiter; not changed"]
    assert files_under(tmp_path) == before


@pytest.mark.parametrize(
    ("sample", "platform", "files"),
    [
        ("macos", "darwin", ["Library/Application Support/Claude/claude_desktop_config.json"]),
        (
            "windows",
            "win32",
            [
                "AppData/Roaming/Claude/claude_desktop_config.json",
                "AppData/Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json",
            ],
        ),
    ],
)
def test_other_platforms_layouts(
    mcpmanager: Runner, tmp_path: Path, sample: str, platform: str, files: list[str]
) -> None:
    home = user_home(tmp_path, sample)
    original = files_under(home)
    done = mcpmanager("install", "--client", "claude-desktop", "--platform", platform)
    assert done.returncode == 0, done.stderr
    for file in files:
        assert "mcpmanager" in parse(home / file)["mcpServers"]  # type: ignore[operator]
    assert mcpmanager("install", "--client", "claude-desktop", "--undo", "--platform", platform).returncode == 0
    assert files_under(home) == original


def test_vscode_gets_mcp_json_created_and_settings_json_untouched(mcpmanager: Runner, tmp_path: Path) -> None:
    home = user_home(tmp_path, "windows")
    settings = home / "AppData/Roaming/Code/User/settings.json"
    original = files_under(home)
    assert mcpmanager("import", "--from", "vscode", "--platform", "win32").returncode == 0
    done = mcpmanager("install", "--client", "vscode", "--platform", "win32", "--disable-served")
    assert done.returncode == 0, done.stderr
    created = home / "AppData/Roaming/Code/User/mcp.json"
    assert f"{created} is new" in done.stdout
    assert f"{settings} also has fetch, served by mcpmanager: mcpmanager does not edit settings.json" in done.stdout
    assert parse(created)["servers"]["mcpmanager"]["type"] == "stdio"  # type: ignore[index]
    assert settings.read_bytes() == original["AppData/Roaming/Code/User/settings.json"]
    assert mcpmanager("install", "--client", "vscode", "--platform", "win32", "--undo").returncode == 0
    assert not created.exists() and files_under(home) == original


# Windsurf and Gemini CLI (samples from their documentation in tests/data/clients) ------------------

DATA = Path(__file__).resolve().parents[1] / "data" / "clients"


@pytest.mark.parametrize(
    ("client", "label", "relative", "added"),
    [
        ("gemini-cli", "Gemini CLI", ".gemini/settings.json", 7),
        ("windsurf", "Windsurf", ".codeium/windsurf/mcp_config.json", 5),
    ],
)
def test_windsurf_and_gemini_cli_import_install_and_undo(
    mcpmanager: Runner, tmp_path: Path, client: str, label: str, relative: str, added: int
) -> None:
    home = tmp_path / "user"
    path = home / relative
    path.parent.mkdir(parents=True)
    path.write_bytes((DATA / client / path.name).read_bytes())
    original = files_under(home)
    config = tmp_path / "manager" / "config.json"
    secrets = ["FAKE-windsurf-token-0000", "ghp_FAKE0000000000000000000000000gemini", "FAKE-amap-key-0000"]

    dry = mcpmanager("import", "--from", client, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == f"{label}: {path}" and len(lines) == added + 2
    assert ("  + githubCopilot" if client == "gemini-cli" else "  + talaria") in lines
    assert lines[-1] == f"{added} servers would be added to {config}. Nothing was changed (--dry-run)."
    assert all(line.startswith(f"mcpmanager: {path}:") for line in dry.stderr.splitlines())
    assert not config.exists() and files_under(home) == original

    done = mcpmanager("import", "--from", client)
    assert done.returncode == 0, done.stderr
    servers = json.loads(config.read_text())["mcpServers"]
    assert len(servers) == added and all("serverUrl" not in s and "httpUrl" not in s for s in servers.values())

    preview = mcpmanager("install", "--client", client, "--disable-served", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert [secret for secret in secrets if secret in preview.stdout] == []
    assert files_under(home) == original

    install = mcpmanager("install", "--client", client, "--disable-served")
    assert install.returncode == 0, install.stderr
    [backup] = list_backups(path)
    assert f"Installed mcpmanager in {label} ({path}), the engine's mode" in install.stdout
    assert backup.read_bytes() == original[relative]
    doc = parse(path)
    command = mcpmanager_command()
    assert doc["mcpServers"]["mcpmanager"] == {"command": command[0], "args": [*command[1:], "connect"]}  # type: ignore[index]
    assert len(doc[STASH_KEY]) == (added if client == "gemini-cli" else added - 1)  # type: ignore[arg-type]

    undo = mcpmanager("install", "--client", client, "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Restored {path} byte for byte from {backup}." in undo.stdout
    assert files_under(home) == original


# Codex (TOML; sample from its documentation in tests/data/clients/codex) ----------------------------


def test_codex_import_install_disable_served_and_undo(mcpmanager: Runner, tmp_path: Path) -> None:
    import tomllib

    home = tmp_path / "user"
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes((DATA / "codex" / "config.toml").read_bytes())
    original = files_under(home)
    config = tmp_path / "manager" / "config.json"
    secrets = ["ghp_FAKE00000000000000000000000000codex", "FAKE-linear-token-0000"]

    dry = mcpmanager("import", "--from", "codex", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == f"Codex: {path}" and "  + docs-search" in lines and len(lines) == 6 + 2
    assert lines[-1] == f"6 servers would be added to {config}. Nothing was changed (--dry-run)."
    assert dry.stderr.splitlines()[0] == (
        f"mcpmanager: {path}:16: mcp_servers.github.env_vars: variables Codex forwards from its own environment; "
        "not read (add them to env in mcpmanager)"
    )
    assert not [s for s in secrets if s in dry.stderr] and not config.exists() and files_under(home) == original

    assert mcpmanager("import", "--from", "codex").returncode == 0
    assert list(json.loads(config.read_text())["mcpServers"]) == [
        "context7",
        "github",
        "docs-search",
        "figma",
        "linear",
        "time",
    ]

    preview = mcpmanager("install", "--client", "codex", "--disable-served", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert "+enabled = false  # turned off by mcpmanager install" in preview.stdout
    assert [s for s in secrets if s in preview.stdout] == [] and files_under(home) == original

    install = mcpmanager("install", "--client", "codex", "--disable-served")
    assert install.returncode == 0, install.stderr
    [backup] = list_backups(path)
    assert f"Installed mcpmanager in Codex ({path}), the engine's mode" in install.stdout
    turned_off = "Turned off there, since mcpmanager serves them: context7, github, docs search, figma, time"
    assert f"{turned_off} (enabled = false; --undo puts them back)." in install.stdout
    assert backup.read_bytes() == original[".codex/config.toml"]
    doc = tomllib.loads(path.read_text())
    command = mcpmanager_command()
    assert doc["mcp_servers"]["mcpmanager"] == {"command": command[0], "args": [*command[1:], "connect"]}
    assert [n for n, s in doc["mcp_servers"].items() if s.get("enabled", True)] == ["mcpmanager"]

    undo = mcpmanager("install", "--client", "codex", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Restored {path} byte for byte from {backup}." in undo.stdout
    assert files_under(home) == original

    path.write_bytes(original[".codex/config.toml"].replace(b'command = "npx"', b"command = npx"))
    broken = mcpmanager("install", "--client", "codex")
    assert broken.returncode == 2 and broken.stderr.startswith(f"mcpmanager: {path}:11:11: invalid TOML: ")
    assert broken.stderr.rstrip().endswith("; not changed") and list_backups(path) == []


# Goose and Continue (YAML; samples from their documentation in tests/data/clients) ---------------


@pytest.mark.parametrize(
    ("client", "folder", "added", "moved"),
    [
        ("goose", ".config/goose", 6, "filesystem, github, slack, remote-tools (enabled: false"),
        ("continue", ".continue", 6, "SQLite MCP, GitHub, Linear, Docs, fetch (commented out"),
    ],
)
def test_goose_and_continue_import_install_disable_served_and_undo(
    mcpmanager: Runner, tmp_path: Path, client: str, folder: str, added: int, moved: str
) -> None:
    import shutil

    import yaml

    home = tmp_path / "user"
    shutil.copytree(DATA / client, home / folder)
    path = home / folder / "config.yaml"
    original = files_under(home)
    config = tmp_path / "manager" / "config.json"
    secrets = ["ghp_FAKE0000000000000000000000000goose", "FAKE-goose-slack-0000", "FAKE-continue-fetchkey-0000"]

    dry = mcpmanager("import", "--from", client, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    summary = f"{added} servers would be added to {config}. Nothing was changed (--dry-run)."
    assert dry.stdout.splitlines()[-1] == summary
    assert f"mcpmanager: {path}:" in dry.stderr and not [s for s in secrets if s in dry.stdout + dry.stderr]
    assert not config.exists() and files_under(home) == original
    assert mcpmanager("import", "--from", client).returncode == 0
    assert len(json.loads(config.read_text())["mcpServers"]) == added

    preview = mcpmanager("install", "--client", client, "--disable-served", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert [s for s in secrets if s in preview.stdout] == [] and files_under(home) == original
    install = mcpmanager("install", "--client", client, "--disable-served")
    assert install.returncode == 0, install.stderr
    assert f"Turned off there, since mcpmanager serves them: {moved}; --undo puts them back)." in install.stdout
    [backup] = list_backups(path)
    assert backup.read_bytes() == original[f"{folder}/config.yaml"]
    doc = yaml.safe_load(path.read_text())
    command = mcpmanager_command()
    entry = doc["extensions"]["mcpmanager"] if client == "goose" else doc["mcpServers"][-1]
    assert (entry.get("cmd") or entry.get("command"), entry["args"]) == (command[0], [*command[1:], "connect"])

    undo = mcpmanager("install", "--client", client, "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Restored {path} byte for byte from {backup}." in undo.stdout
    assert files_under(home) == original

    unclosed = original[f"{folder}/config.yaml"].replace(b"cmd: uvx", b"cmd: [uvx")
    path.write_bytes(unclosed.replace(b"cwd: /srv/fetch", b"cwd: [/srv/fetch"))
    broken = mcpmanager("install", "--client", client)
    line = 91 if client == "goose" else 53
    assert broken.returncode == 2 and broken.stderr.startswith(f"mcpmanager: {path}:{line}:"), broken.stderr
    assert "invalid YAML" in broken.stderr and broken.stderr.rstrip().endswith("; not changed")
    assert list_backups(path) == []


# Zed, Cline and LM Studio (JSON/JSONC; samples from their documentation in tests/data/clients) ------


@pytest.mark.parametrize(
    ("client", "label", "relative", "added", "moved"),
    [
        (
            "zed",
            "Zed",
            ".config/zed/settings.json",
            6,
            'github, filesystem, postgres, remote-mcp-server, linear ("enabled": false',
        ),
        (
            "cline",
            "Cline",
            ".cline/data/settings/cline_mcp_settings.json",
            7,
            "github.com/modelcontextprotocol/servers/tree/main/src/brave-search, weather, name2empid, remote-notes, "
            'legacy-events, old-sse ("disabled": true',
        ),
        (
            "lm-studio",
            "LM Studio",
            ".lmstudio/mcp.json",
            3,
            f'hf-mcp-server, docs-mcp-server, playwright (kept under "{STASH_KEY}"',
        ),
    ],
)
def test_zed_cline_and_lm_studio_import_install_and_undo(
    mcpmanager: Runner, tmp_path: Path, client: str, label: str, relative: str, added: int, moved: str
) -> None:
    home = tmp_path / "user"
    path = home / relative
    path.parent.mkdir(parents=True)
    path.write_bytes((DATA / client / path.name).read_bytes())
    original = files_under(home)
    config = tmp_path / "manager" / "config.json"
    secrets = ["FAKE-zed-token-0000", "FAKE-zed-pg-password-0000", "FAKE-cline-token-0000", "FAKE-brave-key-0000"]
    secrets += ["hf_FAKE00000000000000000000lmstudio", "FAKE-lmstudio-key-0000"]

    dry = mcpmanager("import", "--from", client, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == f"{label}: {path}" and len(lines) == added + 2
    assert lines[-1] == f"{added} servers would be added to {config}. Nothing was changed (--dry-run)."
    assert all(line.startswith(f"mcpmanager: {path}:") for line in dry.stderr.splitlines())
    assert not [s for s in secrets if s in dry.stdout + dry.stderr]
    assert not config.exists() and files_under(home) == original

    assert mcpmanager("import", "--from", client).returncode == 0
    assert len(json.loads(config.read_text())["mcpServers"]) == added

    preview = mcpmanager("install", "--client", client, "--disable-served", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert [secret for secret in secrets if secret in preview.stdout] == []
    assert files_under(home) == original

    install = mcpmanager("install", "--client", client, "--disable-served")
    assert install.returncode == 0, install.stderr
    [backup] = list_backups(path)
    assert f"Installed mcpmanager in {label} ({path}), the engine's mode" in install.stdout
    assert f"Turned off there, since mcpmanager serves them: {moved}; --undo puts them back)." in install.stdout
    assert backup.read_bytes() == original[relative]
    doc = parse(path) if client != "lm-studio" else json.loads(path.read_text(encoding="utf-8-sig"))
    command = mcpmanager_command()
    entry = {"command": command[0], "args": [*command[1:], "connect"]}
    servers = doc["context_servers" if client == "zed" else "mcpServers"]
    assert servers["mcpmanager"] == ({**entry, "env": {}} if client == "zed" else entry)  # type: ignore[index]

    undo = mcpmanager("install", "--client", client, "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Restored {path} byte for byte from {backup}." in undo.stdout
    assert files_under(home) == original

    path.write_bytes(original[relative].replace(b'"args"', b'"args" "', 1))
    broken = mcpmanager("install", "--client", client)
    assert broken.returncode == 2 and broken.stderr.startswith(f"mcpmanager: {path}:")
    assert "invalid JSON" in broken.stderr and broken.stderr.rstrip().endswith("; not changed")
    assert list_backups(path) == [] and path.read_bytes() == original[relative].replace(b'"args"', b'"args" "', 1)


# GitHub Copilot CLI and OpenCode (JSON/JSONC; samples from their documentation in tests/data/clients) -


@pytest.mark.parametrize(
    ("sample", "client", "label", "relative", "added", "moved", "entry"),
    [
        (
            "copilot-cli/mcp-config.json",
            "copilot-cli",
            "GitHub Copilot CLI",
            ".copilot/mcp-config.json",
            5,
            f'playwright, context7, github, cloudflare-docs, time (kept under "{STASH_KEY}"',
            {"type": "stdio", "tools": ["*"], "deferTools": "never"},  # the engine's mode: discovery
        ),
        (
            "opencode/opencode.json",
            "opencode",
            "OpenCode",
            ".config/opencode/opencode.json",
            4,
            'everything, github, context7 ("enabled": false',
            {"type": "local", "enabled": True},
        ),
        (
            "opencode-v2/opencode.jsonc",
            "opencode",
            "OpenCode",
            ".config/opencode/opencode.jsonc",
            3,
            'my-server, time ("disabled": true',
            {"type": "local"},
        ),
    ],
)
def test_copilot_cli_and_opencode_import_install_and_undo(
    mcpmanager: Runner,
    tmp_path: Path,
    sample: str,
    client: str,
    label: str,
    relative: str,
    added: int,
    moved: str,
    entry: dict[str, object],
) -> None:
    home = tmp_path / "user"
    path = home / relative
    path.parent.mkdir(parents=True)
    path.write_bytes((DATA / sample).read_bytes())
    original = files_under(home)
    config = tmp_path / "manager" / "config.json"
    secrets = ["ghp_FAKE0000000000000000000000000copilot", "ghp_FAKE00000000000000000000000opencode"]
    secrets += ["ctx7sk-FAKE0000000000000000copilot", "FAKE-jira-token-opencode"]

    dry = mcpmanager("import", "--from", client, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == f"{label}: {path}" and len(lines) == added + 2
    assert lines[-1] == f"{added} servers would be added to {config}. Nothing was changed (--dry-run)."
    assert not [s for s in secrets if s in dry.stdout + dry.stderr]
    assert not config.exists() and files_under(home) == original

    assert mcpmanager("import", "--from", client).returncode == 0
    assert len(json.loads(config.read_text())["mcpServers"]) == added

    preview = mcpmanager("install", "--client", client, "--disable-served", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith(f"--- {path}\n+++ {path} (install)\n@@")
    assert [secret for secret in secrets if secret in preview.stdout] == []
    assert files_under(home) == original

    install = mcpmanager("install", "--client", client, "--disable-served")
    assert install.returncode == 0, install.stderr
    [backup] = list_backups(path)
    assert f"Installed mcpmanager in {label} ({path}), the engine's mode" in install.stdout
    assert f"Turned off there, since mcpmanager serves them: {moved}; --undo puts them back)." in install.stdout
    assert backup.read_bytes() == original[relative]
    doc = parse(path)
    command = mcpmanager_command()
    args = [*command[1:], "connect"]
    if client == "opencode":  # the command and its arguments in one list
        mcp = doc["mcp"]
        assert isinstance(mcp, dict)
        mine = mcp["servers"]["mcpmanager"] if "servers" in mcp else mcp["mcpmanager"]
        assert mine == {"type": "local", "command": [command[0], *args], **entry}
    else:
        assert doc["mcpServers"]["mcpmanager"] == {"type": "stdio", "command": command[0], "args": args, **entry}  # type: ignore[index]

    undo = mcpmanager("install", "--client", client, "--undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Restored {path} byte for byte from {backup}." in undo.stdout
    assert files_under(home) == original
