"""Installing mcpmanager into every client's config file of every platform layout in the fixtures
(tests/fixtures/client_configs: linux, macos, windows, and `formats`: JSONC with comments and
trailing commas, CRLF with a byte-order mark, tabs, 4 spaces, a minified one-liner, a fresh Claude
Code file), checking the entry, every other key and value, the text outside the entry, dry runs,
idempotence, undo byte for byte, undo after a user's edit, and turning off served servers."""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.errors import ClientNotFound, InstallError
from mcpmanager.core.clients.install import (
    STASH_KEY,
    bridge_entry,
    inspect,
    install_targets,
    installed_mode,
    plan_install,
    plan_undo,
)
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig
from mcpmanager.core.config.settings import ProxySettings
from tests.helpers.client_samples import SAMPLES

HOMES = {"linux": "linux", "macos": "darwin", "windows": "win32", "formats": "linux"}
CLIENTS = ["claude-desktop", "cursor", "vscode", "claude-code"]
ALL_CLIENTS = [*CLIENTS, "vscode-insiders"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
FAKE_SECRETS = ["ghp_FAKE0000000000000000000000000000linux", "ctx7sk-FAKE-0000-cursor", "FAKE-docs-token-0000"]


def cases() -> list[tuple[str, str, str]]:
    """(home, client, file relative to the home) for every file install writes in the fixtures."""
    found = []
    for home, platform in HOMES.items():
        for client in ALL_CLIENTS:
            try:
                targets = install_targets(client, SAMPLES / home, platform, {})
            except ClientNotFound:
                continue
            found += [(home, client, t.path.relative_to(SAMPLES / home).as_posix()) for t in targets]
    return found


CASES = cases()


def target_in(tmp_path: Path, home: str, client: str, relative: str) -> tuple[Path, Target]:
    copy = tmp_path / "home"
    shutil.copytree(SAMPLES / home, copy)
    targets = install_targets(client, copy, HOMES[home], {})
    return copy, next(t for t in targets if t.path == copy / relative)


def parse(data: bytes | None) -> dict[str, Any]:
    """The document as the clients read it (JSONC)."""
    if data is None or not data.strip():
        return {}
    value = json.loads(clean_jsonc(data.decode("utf-8")))
    assert isinstance(value, dict)
    return value


def section_of(target: Target) -> str:
    return "servers" if target.layout == "vscode" else "mcpServers"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_only_added(before: str, after: str) -> None:
    """Every line of `before` is in `after`, unchanged, in order; the only exceptions are the line a
    comma was added to (the last member before the new one) and an empty `{}` opened up around it."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "insert"):
            continue
        assert tag == "replace" and i2 - i1 == 1, (tag, old[i1:i2])
        line, chunk = old[i1], "".join(new[j1:j2])
        if "{}" in line:
            head, tail = line[: line.index("{}") + 1], line[line.index("{}") + 1 :]
            assert chunk.startswith(head) and chunk.endswith(tail), (line, chunk)
        else:  # one comma added (after the value, before a comment if the line has one)
            assert any(new[j1][k] == "," and new[j1][:k] + new[j1][k + 1 :] == line for k in range(len(new[j1]))), (
                line,
                new[j1],
            )


# Install, file by file ----------------------------------------------------------------------------


def test_every_fixture_client_has_a_case() -> None:
    expected = {(h, c) for h in HOMES for c in CLIENTS} | {("formats", "vscode-insiders")}
    assert {(home, client) for home, client, _ in CASES} == expected
    assert len(CASES) == 18  # Windows has two Claude Desktop files


@pytest.mark.parametrize(("home", "client", "relative"), CASES)
def test_install_writes_the_entry_and_keeps_everything_else(
    tmp_path: Path, home: str, client: str, relative: str
) -> None:
    folder, target = target_in(tmp_path, home, client, relative)
    before = target.path.read_bytes() if target.path.exists() else None
    others = {k: v for k, v in files_under(folder).items() if k != relative}

    change = plan_install(target, COMMAND, "direct")
    assert (target.path.read_bytes() if target.path.exists() else None) == before  # a preview writes nothing
    assert change.changed and change.before == before
    backup = apply_change(change)

    after = target.path.read_bytes()
    assert after == change.after
    doc, section = parse(after), section_of(target)
    assert doc[section]["mcpmanager"] == bridge_entry(target.layout, COMMAND, "direct")
    if target.layout == "vscode":
        assert doc[section]["mcpmanager"]["type"] == "stdio"
    # Every other key and value, parsed, is what it was.
    rest = json.loads(json.dumps(doc))
    del rest[section]["mcpmanager"]
    expected = parse(before) if before is not None else {section: {}}
    if before is not None and section not in expected:
        expected[section] = {}  # a fresh Claude Code file had no user-scope servers yet
    assert rest == expected
    # And as text: the bytes outside the entry are the bytes that were there.
    if before is not None:
        old, new = before.decode("utf-8"), after.decode("utf-8")
        if "\n" not in old.strip():  # minified: the member went in after the last one, compactly
            compact = json.dumps(doc[section]["mcpmanager"], separators=(",", ":"))
            assert new.replace(',"mcpmanager":' + compact, "") == old
        elif section in parse(before):
            assert_only_added(old, new)
        assert new.startswith("\ufeff") == old.startswith("\ufeff")
        assert ("\r\n" in new) == ("\r\n" in old) and (new.count("\r\n") == new.count("\n") or "\r\n" not in old)
        assert backup is not None and backup.read_bytes() == before
        assert backup.parent == target.path.parent and backup.name.startswith(target.path.name + ".mcpmanager-")
    else:
        assert backup is None and list_backups(target.path) == []
    assert {k: v for k, v in files_under(folder).items() if k != relative and ".mcpmanager-" not in k} == others


@pytest.mark.parametrize(("home", "client", "relative"), CASES)
def test_install_twice_changes_nothing_and_undo_restores_every_byte(
    tmp_path: Path, home: str, client: str, relative: str
) -> None:
    folder, target = target_in(tmp_path, home, client, relative)
    original = files_under(folder)
    apply_change(plan_install(target, COMMAND))
    installed = files_under(folder)

    again = plan_install(target, COMMAND)
    assert not again.changed
    assert apply_change(again) is None
    assert files_under(folder) == installed  # no second backup, no change

    undo = plan_undo(target)
    assert undo.changed and undo.exact
    apply_change(undo)
    assert files_under(folder) == original  # byte for byte, the backup gone with it, or the created file

    nothing = plan_undo(target)
    assert not nothing.changed and nothing.notes
    apply_change(nothing)
    assert files_under(folder) == original


@pytest.mark.parametrize(("home", "client", "relative"), CASES)
def test_undo_after_a_user_edit_keeps_the_edit(tmp_path: Path, home: str, client: str, relative: str) -> None:
    _, target = target_in(tmp_path, home, client, relative)
    before = target.path.read_bytes() if target.path.exists() else None
    apply_change(plan_install(target, COMMAND))
    text = target.path.read_bytes().decode("utf-8")
    brace = text.index("{")
    edited = text[: brace + 1] + '"userEdit": {"kept": true},' + text[brace + 1 :]  # as an editor would add it
    target.path.write_bytes(edited.encode("utf-8"))

    undo = plan_undo(target)
    assert undo.changed and not undo.exact
    assert any("edited since" in note for note in undo.notes)
    apply_change(undo)
    doc = parse(target.path.read_bytes())
    assert doc.pop("userEdit") == {"kept": True}
    section = section_of(target)
    expected = parse(before)
    if section not in expected:
        expected[section] = {}
    assert doc == expected
    if before is not None:
        assert list_backups(target.path)[0].read_bytes() == before  # kept for the user


def test_the_files_own_style_is_followed(tmp_path: Path) -> None:
    """Trailing commas where the file has them, a comma added before a comment, the file's line ends
    and indentation, comments kept."""
    folder, vscode = target_in(tmp_path, "formats", "vscode", ".config/Code/User/mcp.json")
    apply_change(plan_install(vscode, COMMAND))
    text = vscode.path.read_bytes().decode("utf-8")
    member = "\r\n".join(
        [
            '        "mcpmanager": {',
            '            "type": "stdio",',
            '            "command": "/opt/mcpmanager/bin/mcpmanager",',
            '            "args": ["connect"]',
            "        },",
            "    },",
        ]
    )
    assert "}, // trailing comma: VS Code allows it\r\n" + member in text
    assert "/* the time server: keep it first */" in text and "// Paris" in text
    insiders = install_targets("vscode-insiders", folder, "linux", {})[0]
    apply_change(plan_install(insiders, COMMAND))
    assert insiders.path.read_text().splitlines()[2:5] == [
        '    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}, // the only one',
        '    "mcpmanager": {',
        '      "type": "stdio",',
    ]


# Turning off what mcpmanager serves ----------------------------------------------------------------


def served_config() -> Config:
    """mcpmanager's config after importing some of the fixtures' servers (names as import gives them)."""
    servers: list[ServerConfig] = [
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone", "Europe/Berlin"]),
        StdioServerConfig("git", "uvx", ["mcp-server-git"]),
        # VS Code's fetch, as import reads it: its envFile merged into env.
        StdioServerConfig(
            "fetch",
            "uvx",
            ["mcp-server-fetch"],
            {
                "HTTPS_PROXY": "http://proxy.example.invalid:3128",
                "USER_AGENT": "ModelContextProtocol/1.0 (User-Specified)",
                "FETCH_TIMEOUT": "30",
            },
        ),
        # Same name and command line, a token entered in mcpmanager: the same server.
        StdioServerConfig("github", "npx", ["-y", "@modelcontextprotocol/server-github"], {"GITHUB_TOKEN": "x"}),
        # Same URL under another name, other headers: not the same server.
        HttpServerConfig("ctx", "https://mcp.context7.com/mcp"),
        # Disabled in mcpmanager: not served, so left on in the client.
        StdioServerConfig("memory", "npx", ["-y", "@modelcontextprotocol/server-memory"], disabled=True),
    ]
    config = Config()
    for server in servers:
        config = config.with_server(server)
    return config


DISABLED = {
    "claude-desktop": ["github"],
    "cursor": ["time"],
    "vscode": ["fetch"],
    "claude-code": ["git", "git (project /home/alice/src/webapp)"],
}


@pytest.mark.parametrize("client", CLIENTS)
def test_disable_served_moves_exactly_the_served_servers_and_undo_brings_them_back(tmp_path: Path, client: str) -> None:
    relative = install_targets(client, SAMPLES / "linux", "linux", {})[0].path.relative_to(SAMPLES / "linux")
    folder, target = target_in(tmp_path, "linux", client, relative.as_posix())
    original = files_under(folder)
    before = parse(target.path.read_bytes())
    config = served_config()

    offer = plan_install(target, COMMAND, config=config, home=folder)
    assert list(offer.served) == DISABLED[client] and offer.moved == ()
    change = plan_install(target, COMMAND, config=config, disable_served=True, home=folder)
    assert list(change.moved) == DISABLED[client] and change.served == ()
    apply_change(change)

    after = parse(target.path.read_bytes())
    section = section_of(target)
    moved = [name for name in DISABLED[client] if "(project" not in name]
    assert after[STASH_KEY] == {name: before[section][name] for name in moved}  # the entries, exactly
    assert set(after[section]) == (set(before[section]) - set(moved)) | {"mcpmanager"}
    old_text = original[target.path.relative_to(folder).as_posix()].decode()
    for name in moved:  # moved as their own text, not re-serialized
        assert _member_text(old_text, name) in target.path.read_text()
    if client == "claude-code":
        project = after["projects"]["/home/alice/src/webapp"]
        assert list(project[STASH_KEY]) == ["git"] and list(project["mcpServers"]) == ["postgres"]
        assert after["projects"]["/home/alice/src/api"] == before["projects"]["/home/alice/src/api"]
    rest = {k: v for k, v in after.items() if k not in (section, STASH_KEY, "projects")}
    assert rest == {k: v for k, v in before.items() if k not in (section, "projects")}
    state = inspect(target, config, folder)
    assert state.mode == "default" and list(state.disabled) == DISABLED[client] and state.served == ()

    undo = plan_undo(target)
    assert undo.exact and list(undo.moved) == DISABLED[client]
    apply_change(undo)
    assert files_under(folder) == original


def _member_text(text: str, name: str) -> str:
    """`"name": {...}` as written in `text` (values here hold no braces in strings)."""
    start = text.index(f'"{name}": {{')
    depth, i = 0, text.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
        i += 1


def test_disable_served_then_a_user_edit_then_undo_puts_the_servers_back(tmp_path: Path) -> None:
    folder, target = target_in(tmp_path, "linux", "claude-code", ".claude.json")
    before = parse(target.path.read_bytes())
    apply_change(plan_install(target, COMMAND, "direct", config=served_config(), disable_served=True, home=folder))
    # Claude Code rewrites its file at every start: here, a counter.
    target.path.write_text(target.path.read_text().replace('"numStartups": 57', '"numStartups": 58'))

    undo = plan_undo(target)
    assert not undo.exact and set(undo.moved) == set(DISABLED["claude-code"])
    apply_change(undo)
    after = parse(target.path.read_bytes())
    assert after.pop("numStartups") == 58
    before.pop("numStartups")
    # Every server is back in its scope (the user-scope git at the end now), nothing of mcpmanager left.
    assert after["mcpServers"] == before["mcpServers"]
    assert after["projects"] == before["projects"]
    assert after == before


def test_a_server_configured_again_meanwhile_is_not_overwritten_by_undo(tmp_path: Path) -> None:
    folder, target = target_in(tmp_path, "linux", "cursor", ".cursor/mcp.json")
    apply_change(plan_install(target, COMMAND, config=served_config(), disable_served=True, home=folder))
    doc_text = target.path.read_text()
    target.path.write_text(doc_text.replace('"mcpServers": {', '"mcpServers": {\n    "time": {"command": "mine"},', 1))
    undo = plan_undo(target)
    apply_change(undo)
    after = parse(target.path.read_bytes())
    assert after["mcpServers"]["time"] == {"command": "mine"}
    assert after[STASH_KEY]["time"]["command"] == "uvx"  # still kept, not lost
    assert any("configured again" in note for note in undo.notes)
    assert "mcpmanager" not in after["mcpServers"]


def test_vscode_settings_json_is_never_edited_but_its_served_servers_are_named(tmp_path: Path) -> None:
    folder, target = target_in(tmp_path, "formats", "vscode", ".config/Code/User/mcp.json")
    settings = folder / ".config/Code/User/settings.json"
    original = settings.read_bytes()
    change = plan_install(target, COMMAND, config=served_config(), disable_served=True, home=folder)
    assert change.notes and "settings.json also has git" in change.notes[0]
    apply_change(change)
    assert settings.read_bytes() == original
    assert target.path.read_bytes().startswith("\ufeff".encode())


# Previews, modes, refusals ------------------------------------------------------------------------


def test_the_preview_is_a_diff_with_secrets_masked(tmp_path: Path) -> None:
    folder, target = target_in(tmp_path, "linux", "claude-desktop", ".config/Claude/claude_desktop_config.json")
    diff = plan_install(target, COMMAND, config=served_config(), disable_served=True, home=folder).diff()
    assert diff.startswith(f"--- {target.path}\n+++ {target.path} (install)\n@@")
    assert '+    "mcpmanager": {' in diff and '+  "disabledByMcpmanager": {' in diff
    assert '"GITHUB_PERSONAL_ACCESS_TOKEN": "***"' in diff
    assert not any(secret in diff for secret in FAKE_SECRETS)


def test_changing_the_mode_and_undoing_twice_unwinds_to_the_original(tmp_path: Path) -> None:
    folder, target = target_in(tmp_path, "macos", "cursor", ".cursor/mcp.json")
    original = files_under(folder)
    apply_change(plan_install(target, COMMAND))
    assert inspect(target).mode == "default"
    assert installed_mode(parse(target.path.read_bytes())["mcpServers"]["mcpmanager"]) == "default"
    apply_change(plan_install(target, COMMAND, "direct"))
    assert inspect(target).mode == "direct" and len(list_backups(target.path)) == 2
    apply_change(plan_install(target, COMMAND, "discovery"))
    entry = parse(target.path.read_bytes())["mcpServers"]["mcpmanager"]
    assert entry == {"command": COMMAND[0], "args": ["connect", "--mode", "discovery"]}
    for mode in ("direct", "default"):
        apply_change(plan_undo(target))
        assert inspect(target).mode == mode
    apply_change(plan_undo(target))
    assert files_under(folder) == original


def test_the_command_line_goes_into_the_entry_as_given() -> None:
    command = ["/usr/bin/python3", "-m", "mcpmanager"]
    assert bridge_entry("mcpServers", command) == {"command": command[0], "args": ["-m", "mcpmanager", "connect"]}
    assert bridge_entry("vscode", command, "direct")["args"] == ["-m", "mcpmanager", "connect", "--mode", "direct"]
    assert bridge_entry("claude-code", COMMAND, "direct") == {
        "type": "stdio",
        "command": COMMAND[0],
        "args": ["connect", "--mode", "direct"],
        "env": {},
    }


def test_in_discovery_mode_claude_codes_entry_is_always_loaded(tmp_path: Path) -> None:
    """Claude Code defers every MCP tool behind its own tool search, mcpmanager's meta-tools included,
    unless the server's entry says `"alwaysLoad": true` (Claude Code 2.1.332's config schema). In
    discovery mode (chosen, or the engine's when none is) install writes it; in direct mode it does
    not: Claude Code's search is then what keeps every tool out of the context."""
    entry = {"type": "stdio", "command": COMMAND[0], "args": ["connect"], "env": {}}
    assert bridge_entry("claude-code", COMMAND) == {**entry, "alwaysLoad": True}  # the engine's: discovery
    assert bridge_entry("claude-code", COMMAND, engine_mode="direct") == entry
    chosen = {**entry, "args": ["connect", "--mode", "discovery"]}
    assert bridge_entry("claude-code", COMMAND, "discovery", engine_mode="direct") == {**chosen, "alwaysLoad": True}
    assert bridge_entry("mcpServers", COMMAND, "discovery") == {"command": COMMAND[0], "args": chosen["args"]}
    folder = tmp_path / "home"
    (folder / ".claude").mkdir(parents=True)
    [target] = install_targets("claude-code", folder, "linux", {})
    direct = Config(proxy=ProxySettings(mode="direct"))
    apply_change(plan_install(target, COMMAND, config=direct))  # the engine's mode, direct there
    assert "alwaysLoad" not in parse(target.path.read_bytes())["mcpServers"]["mcpmanager"]
    apply_change(plan_install(target, COMMAND, "discovery", config=direct))
    assert parse(target.path.read_bytes())["mcpServers"]["mcpmanager"]["alwaysLoad"] is True
    assert plan_install(target, COMMAND, "discovery").changed is False
    apply_change(plan_undo(target))
    assert "alwaysLoad" not in parse(target.path.read_bytes())["mcpServers"]["mcpmanager"]
    apply_change(plan_undo(target))
    assert not target.path.exists()


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (".config/Claude/claude_desktop_config.json", ":6:7: invalid JSON: Expecting ',' delimiter; not changed"),
        (".cursor/mcp.json", ": expected a JSON object at the top level, got array; not changed"),
        (".claude.json", ": mcpServers: expected an object, got array; not changed"),
    ],
)
def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path, relative: str, expected: str) -> None:
    folder = tmp_path / "home"
    shutil.copytree(SAMPLES / "broken", folder)
    (folder / ".claude").mkdir()
    original = files_under(folder)
    target = next(t for c in CLIENTS for t in install_targets(c, folder, "linux", {}) if t.path == folder / relative)
    with pytest.raises(InstallError) as error:
        apply_change(plan_install(target, COMMAND))
    assert str(error.value) == f"{target.path}{expected}"
    assert files_under(folder) == original


def test_a_client_not_on_this_machine_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(ClientNotFound) as error:
        install_targets("cursor", tmp_path, "linux", {})
    assert str(error.value) == f"Cursor not found (looked at {tmp_path}/.cursor/mcp.json)"
    with pytest.raises(ClientNotFound, match="unknown client 'emacs'"):
        install_targets("emacs", tmp_path, "linux", {})
    # A client that ran once has its folder: the file is created on install.
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".claude").mkdir()
    assert [t.path for t in install_targets("cursor", tmp_path, "linux", {})] == [tmp_path / ".cursor/mcp.json"]
    assert [t.path for t in install_targets("claude-code", tmp_path, "linux", {})] == [tmp_path / ".claude.json"]


def test_a_file_changed_after_the_preview_is_not_written(tmp_path: Path) -> None:
    _, target = target_in(tmp_path, "linux", "cursor", ".cursor/mcp.json")
    change = plan_install(target, COMMAND)
    target.path.write_text(target.path.read_text() + "\n")
    with pytest.raises(InstallError, match="changed since the preview"):
        apply_change(change)
    assert list_backups(target.path) == []


def test_backups_in_one_second_are_numbered_and_the_newest_is_undone_first(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    _, target = target_in(tmp_path, "linux", "cursor", ".cursor/mcp.json")
    now = datetime(2026, 11, 5, 12, 0, 0, tzinfo=UTC)
    first = apply_change(plan_install(target, COMMAND), now)
    second = apply_change(plan_install(target, COMMAND, "direct"), now)
    assert first is not None and first.name == "mcp.json.mcpmanager-20261105-120000Z.bak"  # UTC, as export's
    assert second is not None and second.name == "mcp.json.mcpmanager-20261105-120000Z-2.bak"
    assert list_backups(target.path) == [second, first]
    assert plan_undo(target).restore == second


def test_a_backup_named_in_local_time_before_is_still_undone_in_its_turn(tmp_path: Path) -> None:
    """Install named its backups in local time before (no `Z`): undo still finds one, ordered by
    the instant it names among the UTC ones, and restores it."""
    from datetime import UTC, datetime, timedelta

    _, target = target_in(tmp_path, "linux", "cursor", ".cursor/mcp.json")
    original = target.path.read_bytes()
    apply_change(plan_install(target, COMMAND), datetime(2026, 11, 5, 12, 0, 0, tzinfo=UTC))
    [utc] = list_backups(target.path)
    local = datetime(2026, 11, 5, 12, 0, 0, tzinfo=UTC).astimezone() - timedelta(hours=1)  # an hour earlier
    old = utc.with_name(f"mcp.json.mcpmanager-{local:%Y%m%d-%H%M%S}.bak")
    utc.rename(old)
    later = datetime(2026, 11, 5, 12, 30, 0, tzinfo=UTC)
    newer = apply_change(plan_install(target, COMMAND, "direct"), later)
    assert list_backups(target.path) == [newer, old]
    apply_change(plan_undo(target))
    undo = plan_undo(target)
    assert undo.exact and undo.restore == old
    apply_change(undo)
    assert target.path.read_bytes() == original and list_backups(target.path) == []


def test_a_symlinked_file_is_written_through_the_link(tmp_path: Path) -> None:
    _, target = target_in(tmp_path, "linux", "cursor", ".cursor/mcp.json")
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    shutil.move(target.path, real)
    os.symlink(real, target.path)
    original = real.read_bytes()
    backup = apply_change(plan_install(target, COMMAND))
    assert target.path.is_symlink() and "mcpmanager" in parse(real.read_bytes())["mcpServers"]
    assert backup is not None and backup.parent == target.path.parent  # beside the file as the user knows it
    undo = plan_undo(target)
    assert undo.exact
    apply_change(undo)
    assert target.path.is_symlink() and real.read_bytes() == original
