"""`mcpmanager export`: mcpmanager's servers written into every client's file in its own format, on
the sample files of the clients (tests/fixtures/client_configs/linux and tests/data/clients): the
file parses in the client's format with the entries each client's documentation gives, mcpmanager's
own importer reads them back as the same servers, every other byte stays, undo restores the file
byte for byte (or, after an edit, takes out only what export wrote); keyring secrets, collisions,
servers that are off, names a client refuses."""

from __future__ import annotations

import difflib
import json
import shutil
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.export import ExportError, ExportPlan, apply_export, chosen_servers, plan_export
from mcpmanager.core.clients.export_entries import WRITERS
from mcpmanager.core.clients.export_undo import apply_export_undo, list_records, plan_export_undo
from mcpmanager.core.clients.importing import same_definition
from mcpmanager.core.clients.install import bridge_entry, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import CLIENTS, TABLE
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import ServerConfig, StdioServerConfig
from mcpmanager.core.vault.store import Vault
from tests.helpers.client_samples import user_home

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
SAMPLES = {
    "windsurf": (DATA / "windsurf" / "mcp_config.json", ".codeium/windsurf/mcp_config.json"),
    "gemini-cli": (DATA / "gemini-cli" / "settings.json", ".gemini/settings.json"),
    "codex": (DATA / "codex" / "config.toml", ".codex/config.toml"),
    "zed": (DATA / "zed" / "settings.json", ".config/zed/settings.json"),
    "cline": (DATA / "cline" / "cline_mcp_settings.json", ".cline/data/settings/cline_mcp_settings.json"),
    "lm-studio": (DATA / "lm-studio" / "mcp.json", ".lmstudio/mcp.json"),
    "goose": (DATA / "goose" / "config.yaml", ".config/goose/config.yaml"),
    "continue": (DATA / "continue" / "config.yaml", ".continue/config.yaml"),
}
WIKI_TOKEN = "FAKE-wiki-token-0000"
SERVERS: dict[str, Any] = {
    "clock": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "Europe/Paris"}, "startTimeout": 20},
    "wiki": {"type": "http", "url": "https://wiki.example/mcp", "headers": {"Authorization": f"Bearer {WIKI_TOKEN}"}},
    "feed": {"type": "sse", "url": "https://feed.example/sse"},
    "paused": {"command": "node", "args": ["paused.js"], "disabled": True},
    "notes": {"command": "python3", "args": ["-m", "notes"], "cwd": "/srv/notes"},
    "scratch.pad": {"command": "scratch", "args": []},
}
CLOCK = {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "Europe/Paris"}}
WIKI_HEADERS = {"Authorization": f"Bearer {WIKI_TOKEN}"}
SCRATCH = {"command": "scratch", "args": []}
NOTES = {"command": "python3", "args": ["-m", "notes"], "cwd": "/srv/notes"}
TYPED = {
    "clock": {"type": "stdio", **CLOCK},
    "wiki": {"type": "http", "url": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
    "feed": {"type": "sse", "url": "https://feed.example/sse"},
    "scratch.pad": {"type": "stdio", **SCRATCH},
}
# What each client's file gets, by the client's own documentation (export_entries' table).
EXPECTED: dict[str, dict[str, Any]] = {
    "claude-desktop": {"clock": CLOCK, "scratch.pad": SCRATCH},
    "cursor": {
        "clock": CLOCK,
        "wiki": {"url": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "feed": {"url": "https://feed.example/sse", "type": "sse"},
        "scratch.pad": SCRATCH,
    },
    "vscode": TYPED,
    "vscode-insiders": TYPED,
    "claude-code": {**TYPED, "scratch.pad": {"type": "stdio", **SCRATCH, "env": {}}},
    "windsurf": {
        "clock": CLOCK,
        "wiki": {"serverUrl": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "feed": {"serverUrl": "https://feed.example/sse", "type": "sse"},
        "paused": {"command": "node", "args": ["paused.js"], "disabled": True},
        "scratch.pad": SCRATCH,
    },
    "gemini-cli": {
        "clock": CLOCK,
        "wiki": {"httpUrl": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "feed": {"url": "https://feed.example/sse"},
        "notes": NOTES,
        "scratch.pad": SCRATCH,
    },
    "codex": {
        "clock": {**CLOCK, "startup_timeout_sec": 20},
        "wiki": {"url": "https://wiki.example/mcp", "http_headers": WIKI_HEADERS},
        "paused": {"command": "node", "args": ["paused.js"], "enabled": False},
        "notes": NOTES,
        "scratch-pad": SCRATCH,
    },
    "zed": {
        "clock": CLOCK,
        "wiki": {"url": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "paused": {"command": "node", "args": ["paused.js"], "env": {}, "enabled": False},
        "scratch.pad": {**SCRATCH, "env": {}},
    },
    "cline": {
        "clock": CLOCK,
        "wiki": {"type": "streamableHttp", "url": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "feed": {"type": "sse", "url": "https://feed.example/sse"},
        "paused": {"command": "node", "args": ["paused.js"], "disabled": True},
        "notes": NOTES,
        "scratch.pad": SCRATCH,
    },
    "lm-studio": {
        "clock": CLOCK,
        "wiki": {"url": "https://wiki.example/mcp", "headers": WIKI_HEADERS},
        "scratch.pad": SCRATCH,
    },
}
GOOSE = {"description": "", "envs": {}, "env_keys": [], "timeout": 300}  # what Goose writes for an extension
EXPECTED["goose"] = {
    "clock": {"type": "stdio", "name": "clock", "enabled": True, "cmd": "uvx", "args": ["mcp-server-time"]}
    | {**GOOSE, "envs": {"TZ": "Europe/Paris"}},
    "wiki": {"type": "streamable_http", "name": "wiki", "enabled": True, "uri": "https://wiki.example/mcp"}
    | {"headers": WIKI_HEADERS, **GOOSE},
    "paused": {"type": "stdio", "name": "paused", "enabled": False, "cmd": "node", "args": ["paused.js"], **GOOSE},
    "scratch.pad": {"type": "stdio", "name": "scratch.pad", "enabled": True, "cmd": "scratch", "args": [], **GOOSE},
}
EXPECTED["continue"] = {
    "clock": {"name": "clock", "type": "stdio", **CLOCK},
    "wiki": {"name": "wiki", "type": "streamable-http", "url": "https://wiki.example/mcp"}
    | {"requestOptions": {"headers": WIKI_HEADERS}},
    "feed": {"name": "feed", "type": "sse", "url": "https://feed.example/sse"},
    "notes": {"name": "notes", "type": "stdio", **NOTES},
    "scratch.pad": {"name": "scratch.pad", "type": "stdio", **SCRATCH},
}
LAYOUT_SECTION = {"vscode": "servers", "vscode-insiders": "servers", "zed": "context_servers", "goose": "extensions"}


def config_of(servers: dict[str, Any]) -> Config:
    return parse_config(json.dumps({"mcpServers": servers}), "config.json")


def home_with_every_client(tmp_path: Path) -> Path:
    home = user_home(tmp_path)  # Claude Desktop, Cursor, VS Code, Claude Code
    for sample, relative in SAMPLES.values():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, home / relative)
    (home / ".config" / "Code - Insiders" / "User").mkdir(parents=True)  # there, with no mcp.json yet
    return home


def target_of(client: str, home: Path) -> Target:
    [target] = install_targets(client, home, "linux", {})
    return target


def section(client: str, data: bytes) -> dict[str, Any]:
    if client in ("goose", "continue"):
        doc = yaml.safe_load(data.decode("utf-8")) or {}
        if client == "continue":
            named = [item for item in doc.get("mcpServers") or [] if isinstance(item, dict) and "name" in item]
            return {item["name"]: item for item in reversed(named)}  # the first of a name, as Continue
        return dict(doc.get("extensions") or {})
    if client == "codex":
        doc = tomllib.loads(data.decode("utf-8"))
        return dict(doc.get("mcp_servers", {}))
    doc = json.loads(clean_jsonc(data.decode("utf-8")))
    return dict(doc.get(LAYOUT_SECTION.get(client, "mcpServers"), {}))


def inserted_only(before: str, after: str) -> str:
    """What was put in, after checking that every character of `before` is still in `after`, in order."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, before[i1:i2], after[j1:j2])
        added.append(after[j1:j2] if tag == "insert" else "")
    return "".join(added)


def leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.glob(f"{path.name}.mcpmanager-export-*"))


def export(target: Target, config: Config, **options: Any) -> ExportPlan:
    plan = plan_export(target, chosen_servers(config, None, Path("config.json")), **options)
    apply_export(plan)
    return plan


# Every client: the format, the round trip, every other byte, undo -------------------------------------


@pytest.mark.parametrize("client", list(EXPECTED))
def test_export_round_trip_keeps_every_other_byte_and_undo_restores_it(tmp_path: Path, client: str) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    original = target.path.read_bytes() if target.path.exists() else None
    config = config_of(SERVERS)

    plan = export(target, config, home=home)
    after = target.path.read_bytes()
    written = section(client, after)
    before_section = section(client, original) if original is not None else {}
    assert {k: v for k, v in written.items() if k not in before_section} == EXPECTED[client]
    assert plan.written == EXPECTED[client]
    assert [line.mark for line in plan.lines].count("+") == len(EXPECTED[client])
    if original is not None:
        inserted_only(original.decode("utf-8"), after.decode("utf-8"))  # nothing else touched
        assert [b.name for b in target.path.parent.glob(f"{target.path.name}.mcpmanager-export-*.bak")] != []

    # mcpmanager's own importer reads the same servers back (Codex's name made one it accepts).
    read = read_client_config(client, target.path, target.layout, home=home)
    imported = {s.name: s for s in read.servers}
    for name in EXPECTED[client]:
        mine = config.servers["scratch.pad" if name == "scratch-pad" else name]
        theirs = imported[name]
        assert same_definition(theirs, mine), (theirs, mine)
        assert theirs.disabled == mine.disabled
    if client == "codex":
        assert imported["clock"].start_timeout == 20

    undo = plan_export_undo(target)
    assert undo.change.exact
    apply_export_undo(undo)
    assert (target.path.read_bytes() if target.path.exists() else None) == original
    assert leftovers(target.path) == []


def test_the_preview_masks_secrets_and_names_what_is_not_written(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    plan = plan_export(target_of("claude-desktop", home), list(config_of(SERVERS).servers.values()), home=home)
    assert [str(line) for line in plan.lines] == [
        "  + clock",
        "  ! wiki: a remote server: Claude Desktop reads only local (stdio) servers from its file (add it in "
        "Claude Desktop's Settings, Connectors): not exported",
        "  ! feed: a remote server: Claude Desktop reads only local (stdio) servers from its file (add it in "
        "Claude Desktop's Settings, Connectors): not exported",
        "  ! paused: off in mcpmanager, and Claude Desktop has no switch to keep a server off: not exported "
        "(name it in --servers to export it on)",
        "  ! notes: it runs in /srv/notes (cwd), and Claude Desktop has no setting for a server's folder: not exported",
        "  + scratch.pad",
    ]
    cursor = plan_export(target_of("cursor", home), list(config_of(SERVERS).servers.values()), home=home)
    diff = cursor.change.diff()
    assert '+        "Authorization": "***"' in diff and WIKI_TOKEN not in diff


def test_a_new_file_is_created_and_undo_removes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    target = target_of("cursor", home)
    export(target, config_of({"clock": SERVERS["clock"]}))
    assert json.loads(target.path.read_text()) == {"mcpServers": {"clock": CLOCK}}
    assert leftovers(target.path) == [list_records(target.path)[0].name]  # a record, no backup: nothing was there
    undo = plan_export_undo(target)
    assert undo.change.after is None
    apply_export_undo(undo)
    assert not target.path.exists() and leftovers(target.path) == []


def test_every_client_has_a_writer_and_the_bridge_is_written_as_install_writes_it() -> None:
    assert set(WRITERS) == set(CLIENTS), "a client without an export writer: add it to export_entries.WRITERS"
    command = ["/opt/mcpmanager/bin/mcpmanager"]
    bridge = StdioServerConfig("mcpmanager", command[0], ["connect"])
    yaml_clients = ("goose", "continue")
    for row in TABLE:  # every other client's entry is the bridge install writes into the row's layout
        if row.key not in yaml_clients:
            assert WRITERS[row.key].entry(bridge) == bridge_entry(row.layout, command, engine_mode="direct"), row.key
    for client in yaml_clients:  # install's YAML entry; Goose's has a description of its own
        theirs = bridge_entry(client, command, None, "direct")  # type: ignore[arg-type]
        assert WRITERS[client].entry(bridge) == {**theirs, **({"description": ""} if client == "goose" else {})}


# Undo after an edit ------------------------------------------------------------------------------------


# The user's edits after the export: another server added, and one export wrote changed.
EDITS: dict[str, list[tuple[str, str]]] = {
    "cursor": [
        ('"command": "scratch"', '"command": "scratch2"'),
        ('"mcpServers": {', '"mcpServers": {\n    "mine": {"command": "m"},'),
    ],
    "codex": [('command = "scratch"', 'command = "scratch2"'), ("[tui]", '[mcp_servers.mine]\ncommand = "m"\n\n[tui]')],
    "goose": [("cmd: scratch\n", "cmd: scratch2\n"), ("extensions:\n", "extensions:\n    mine:\n        cmd: m\n")],
    "continue": [
        ("command: scratch\n", "command: scratch2\n"),
        ("mcpServers:\n", "mcpServers:\n- name: mine\n  command: m\n"),
    ],
}

MINE = {
    "cursor": {"command": "m"},
    "codex": {"command": "m"},
    "goose": {"cmd": "m"},
    "continue": {"name": "mine", "command": "m"},
}


@pytest.mark.parametrize("client", list(EDITS))
def test_undo_after_an_edit_takes_out_only_what_export_wrote(tmp_path: Path, client: str) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    original = target.path.read_bytes()
    export(target, config_of({"clock": SERVERS["clock"], "scratch.pad": SERVERS["scratch.pad"]}))
    name = "scratch-pad" if client == "codex" else "scratch.pad"
    text = target.path.read_text()
    for old, new in EDITS[client]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    target.path.write_text(text)

    undo = plan_export_undo(target)
    assert not undo.change.exact
    apply_export_undo(undo)
    now = section(client, target.path.read_bytes())
    assert "clock" not in now and "mine" in now
    assert now[name]["cmd" if client == "goose" else "command"] == "scratch2"
    assert f"{name} was changed in {target.path} since the export: kept" in undo.change.notes
    assert set(now) - {name, "mine"} == set(section(client, original))
    assert len(leftovers(target.path)) == 1  # the backup stays for the user, the record went


# Collisions --------------------------------------------------------------------------------------------


def test_a_name_taken_is_kept_unless_replace_and_the_same_server_is_left_alone(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("claude-desktop", home)
    original = target.path.read_bytes()
    mine = {
        "github": {"command": "uvx", "args": ["other-github"]},  # a different server under a taken name
        "filesystem": {  # the same server as Claude Desktop's
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/alice/Documents", "/home/alice/Downloads"],
        },
    }
    plan = plan_export(target, list(config_of(mine).servers.values()), home=home)
    assert [str(line) for line in plan.lines] == [
        "  ! github: Claude Desktop has a different server named 'github': kept (--replace writes mcpmanager's "
        "over it)",
        "  = filesystem: Claude Desktop has it already as 'filesystem'",
    ]
    assert not plan.change.changed

    plan = export(target, config_of(mine), replace_taken=True, home=home)
    assert [line.mark for line in plan.lines] == ["~", "="]
    after = section("claude-desktop", target.path.read_bytes())
    assert after["github"] == {"command": "uvx", "args": ["other-github"]}
    assert list(after) == list(section("claude-desktop", original))  # in its place
    undo = plan_export_undo(target)
    apply_export_undo(undo)
    assert target.path.read_bytes() == original


@pytest.mark.parametrize(
    ("client", "name"), [("cursor", "time"), ("codex", "time"), ("goose", "time"), ("continue", "fetch")]
)
def test_replace_then_undo_exact_and_after_an_edit(tmp_path: Path, client: str, name: str) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    original_bytes = target.path.read_bytes()
    original = section(client, original_bytes)
    mine = config_of({name: {"command": "uvx", "args": ["mine"]}})
    plan = export(target, mine, replace_taken=True)
    assert [line.mark for line in plan.lines] == ["~"]
    replaced = section(client, target.path.read_bytes())
    assert replaced[name] == plan.written[name] and set(replaced) == set(original)
    apply_export_undo(plan_export_undo(target))
    assert target.path.read_bytes() == original_bytes  # byte for byte

    export(target, mine, replace_taken=True)
    edit = EDITS[client][1]
    target.path.write_text(target.path.read_text().replace(*edit))
    apply_export_undo(plan_export_undo(target))
    assert section(client, target.path.read_bytes()) == {**original, "mine": MINE[client]}


# Secrets -----------------------------------------------------------------------------------------------

GREETING = "open-sesame-4f9a2c"  # no secret's shape, under a harmless name: only the keyring says so


def test_keyring_references_are_not_written_unless_asked_then_masked(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("vscode", home)
    servers = list(
        config_of({"greeter": {"command": "greet", "env": {"GREETING": "${keyring:greeter}"}}}).servers.values()
    )
    plan = plan_export(target, servers, home=home)
    assert [str(line) for line in plan.lines] == [
        f"  ! greeter: env GREETING refers to the keyring, which VS Code cannot read: not exported (--with-secrets "
        f"writes the secret into {target.path})"
    ]
    assert not plan.change.changed

    missing = plan_export(target, servers, secrets_from=Vault(), home=home)
    assert [line.mark for line in missing.lines] == ["!"]
    assert "refers to keyring entry 'greeter', which is not in the keyring" in missing.lines[0].text

    Vault().set("greeter", GREETING)
    plan = plan_export(target, servers, secrets_from=Vault(), home=home)
    assert plan.secrets == ("greeter: env GREETING",)
    assert GREETING in (plan.change.after or b"").decode()
    diff = plan.change.diff()
    assert '"GREETING": "***"' in diff and GREETING not in diff


def test_plain_secrets_of_the_config_are_written_and_masked(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    plan = plan_export(target_of("gemini-cli", home), [config_of(SERVERS).servers["wiki"]], home=home)
    assert WIKI_TOKEN in (plan.change.after or b"").decode() and WIKI_TOKEN not in plan.change.diff()


# Off, names, selection ---------------------------------------------------------------------------------


def test_a_server_that_is_off_goes_out_on_only_when_named(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    paused = config_of(SERVERS).servers["paused"]
    plan = plan_export(target_of("cursor", home), [paused], named=True, home=home)
    assert [str(line) for line in plan.lines] == ["  + paused: written on (Cursor has no switch to keep it off)"]
    assert plan.written == {"paused": {"command": "node", "args": ["paused.js"]}}


def test_names_the_client_refuses_and_mcpmanager_s_own_entry(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    servers: list[ServerConfig] = [
        StdioServerConfig("a.b", "x"),
        StdioServerConfig("a-b", "y"),
        StdioServerConfig("mcpmanager", "z"),
        StdioServerConfig("bridge", "/usr/bin/mcpmanager", ["connect"]),
    ]
    plan = plan_export(target_of("codex", home), servers, home=home)
    assert list(plan.written) == ["a-b", "a-b-2"]
    assert [str(line) for line in plan.lines] == [
        "  + a.b: written as 'a-b' (Codex does not accept 'a.b')",
        "  + a-b: written as 'a-b-2' (another server exported now is 'a-b')",
        "  ! mcpmanager: mcpmanager's own entry (the bridge to it): not exported",
        "  ! bridge: mcpmanager's own entry (the bridge to it): not exported",
    ]


def test_choosing_servers(tmp_path: Path) -> None:
    config = config_of(SERVERS)
    source = tmp_path / "config.json"
    assert [s.name for s in chosen_servers(config, ["wiki", "clock"], source)] == ["clock", "wiki"]
    with pytest.raises(ExportError) as unknown:
        chosen_servers(config, ["clock", "nope"], source)
    assert str(unknown.value) == (
        f"no server 'nope' in {source} (it has: clock, wiki, feed, paused, notes, scratch.pad)"
    )
    with pytest.raises(ExportError) as empty:
        chosen_servers(Config(), None, source)
    assert str(empty.value) == f"no servers in {source}: nothing to export"


def test_the_bridge_in_the_file_is_named(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("cursor", home)
    target.path.write_text(json.dumps({"mcpServers": {"mcpmanager": {"command": "mcpmanager", "args": ["connect"]}}}))
    plan = plan_export(target, [replace(config_of(SERVERS).servers["clock"])], home=home)
    assert plan.bridge


def test_codex_undo_after_an_edit_leaves_the_file_as_it_was_plus_the_edit(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("codex", home)
    original = target.path.read_text()
    assert original.endswith("\n")
    export(target, config_of({"clock": SERVERS["clock"]}))
    edit = '\n[mcp_servers.mine]\ncommand = "m"\n'
    target.path.write_text(target.path.read_text() + edit)
    apply_export_undo(plan_export_undo(target))
    assert target.path.read_text() == original + edit  # the blank line export put before its table went too


def test_every_claude_desktop_file_on_windows_gets_the_servers_and_each_undoes(tmp_path: Path) -> None:
    home = user_home(tmp_path, "windows")
    targets = install_targets("claude-desktop", home, "win32", {})
    assert len(targets) == 2  # the installer's and the Microsoft Store build's own copy
    originals = [t.path.read_bytes() for t in targets]
    for target in targets:
        export(target, config_of({"clock": SERVERS["clock"]}))
        assert section("claude-desktop", target.path.read_bytes())["clock"] == CLOCK
    for target, original in zip(targets, originals, strict=True):
        apply_export_undo(plan_export_undo(target))
        assert target.path.read_bytes() == original


# The file as it is -------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", ["cursor", "codex"])
def test_windows_line_ends_stay_and_undo_restores_them(tmp_path: Path, client: str) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of(client, home)
    original = target.path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    target.path.write_bytes(original)
    export(target, config_of({"clock": SERVERS["clock"]}))
    after = target.path.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n") > original.count(b"\r\n")
    assert section(client, after)["clock"] == EXPECTED[client]["clock"]
    apply_export_undo(plan_export_undo(target))
    assert target.path.read_bytes() == original


def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    servers = list(config_of({"clock": SERVERS["clock"]}).servers.values())
    for client, broken in (("cursor", '{"mcpServers": {"a": }'), ("codex", "[mcp_servers.a\ncommand = 1")):
        target = target_of(client, home)
        target.path.write_text(broken)
        with pytest.raises(InstallError) as refused:
            plan_export(target, servers)
        assert str(refused.value).startswith(f"{target.path}:") and str(refused.value).endswith("; not changed")
        assert target.path.read_text() == broken and leftovers(target.path) == []


def test_a_file_changed_after_the_preview_is_not_written(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("cursor", home)
    plan = plan_export(target, list(config_of({"clock": SERVERS["clock"]}).servers.values()))
    target.path.write_text('{"mcpServers": {}}')
    with pytest.raises(InstallError, match="changed since the preview; nothing was written"):
        apply_export(plan)
    assert target.path.read_text() == '{"mcpServers": {}}' and leftovers(target.path) == []


def test_the_same_server_off_there_is_named_so_and_kept(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    time = {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Paris"]}  # Goose's, off there
    plan = plan_export(target_of("goose", home), list(config_of({"time": time}).servers.values()), home=home)
    assert [str(line) for line in plan.lines] == [
        "  ! time: Goose has it as 'time', off there: kept (--replace writes mcpmanager's over it)"
    ]
    assert not plan.change.changed


def test_install_and_export_each_undo_their_own_in_either_order(tmp_path: Path) -> None:
    home = home_with_every_client(tmp_path)
    target = target_of("cursor", home)
    original = target.path.read_bytes()
    for first_undone in ("install", "export"):
        apply_change(plan_install(target, ["/opt/mcpmanager/bin/mcpmanager"]))
        export(target, config_of({"clock": SERVERS["clock"]}))
        for undoing in ("install", "export") if first_undone == "install" else ("export", "install"):
            if undoing == "install":
                apply_change(plan_undo(target))
            else:
                apply_export_undo(plan_export_undo(target))
        assert section("cursor", target.path.read_bytes()) == section("cursor", original)
        if first_undone == "export":  # the last one done, undone first: both byte for byte
            assert target.path.read_bytes() == original
