"""Zed (`settings.json`, `context_servers`, JSONC), Cline (`cline_mcp_settings.json`) and LM Studio
(`mcp.json`), on Linux, macOS and Windows: where their files are, how their own keys are read, and the
round trips on the sample files of tests/data/clients (written from each client's documentation):
import dry run and real, install with every byte outside mcpmanager's part kept, undo byte for byte,
turning off what mcpmanager serves with the client's own switch (Zed, Cline) or the stash (LM Studio),
secrets masked, and a file that does not read refused with nothing changed."""

from __future__ import annotations

import difflib
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import ImportPlan, plan_import
from mcpmanager.core.clients.install import STASH_KEY, inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import find_client_configs, read_client_config
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from mcpmanager.core.engine.control import Control

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
CLINE_FILE = ".cline/data/settings/cline_mcp_settings.json"
# client → (its sample, where it stands under the home folder on Linux)
SAMPLES = {
    "zed": (DATA / "zed" / "settings.json", ".config/zed/settings.json"),
    "cline": (DATA / "cline" / "cline_mcp_settings.json", CLINE_FILE),
    "lm-studio": (DATA / "lm-studio" / "mcp.json", ".lmstudio/mcp.json"),
}
# where Zed's file stands on each platform (Cline's and LM Studio's are the same everywhere)
ZED = {
    "linux": ".config/zed/settings.json",
    "darwin": ".config/zed/settings.json",
    "win32": "AppData/Roaming/Zed/settings.json",
}
PLATFORMS = ["linux", "darwin", "win32"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
BRAVE = "github.com/modelcontextprotocol/servers/tree/main/src/brave-search"
BRAVE_NAME = "github.com-modelcontextprotocol-servers-tree-main-src-brave-search"
NAMES = {
    "zed": ["github", "filesystem", "postgres", "remote-mcp-server", "linear", "time"],
    "cline": [BRAVE_NAME, "weather", "name2empid", "remote-notes", "legacy-events", "old-sse", "sqlite"],
    "lm-studio": ["hf-mcp-server", "docs-mcp-server", "playwright"],
}
# what mcpmanager serves after importing, and the client has on (by their keys in the file)
SERVED = {
    "zed": ["github", "filesystem", "postgres", "remote-mcp-server", "linear"],
    "cline": [BRAVE, "weather", "name2empid", "remote-notes", "legacy-events", "old-sse"],
    "lm-studio": ["hf-mcp-server", "docs-mcp-server", "playwright"],
}
FAKE_SECRETS = [
    "ghp_FAKE000000000000000000000000000000zed",
    "FAKE-zed-pg-password-0000",
    "FAKE-zed-token-0000",
    "FAKE-brave-key-0000",
    "FAKE-weather-key-0000",
    "FAKE-cline-token-0000",
    "hf_FAKE00000000000000000000lmstudio",
    "FAKE-lmstudio-key-0000",
]


def relative(client: str, platform: str = "linux") -> str:
    return ZED[platform] if client == "zed" else SAMPLES[client][1]


def home_with(tmp_path: Path, *clients: str, platform: str = "linux") -> Path:
    home = tmp_path / "home"
    for client in clients:
        path = home / relative(client, platform)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES[client][0], path)
    home.mkdir(exist_ok=True)
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def parse(data: bytes) -> dict[str, Any]:
    value = json.loads(clean_jsonc(data.decode("utf-8")))
    assert isinstance(value, dict)
    return value


def servers_of(client: str, doc: dict[str, Any]) -> dict[str, Any]:
    servers = doc["context_servers" if client == "zed" else "mcpServers"]
    assert isinstance(servers, dict)
    return servers


def apply_import(plan: ImportPlan, config: Path) -> ImportPlan:
    added, skipped = anyio.run(Control(config).import_servers, plan.candidates)
    return replace(plan, added=added, skipped=skipped)


def inserted_only(before: str, after: str) -> str:
    """The text install put in, after checking that every character of `before` is still in `after`,
    in order and unchanged (nothing replaced, nothing deleted)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, before[i1:i2], after[j1:j2])
        if tag == "insert":
            added.append(after[j1:j2])
    return "".join(added)


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_places_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})]
    code = {"linux": ".config", "darwin": "Library/Application Support", "win32": "AppData/Roaming"}[platform]
    legacy = "User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    assert [p for p in places if p[0] in ("zed", "cline", "lm-studio")] == [
        ("zed", "Zed", tmp_path / ZED[platform], "zed"),
        ("cline", "Cline", tmp_path / CLINE_FILE, "cline"),
        ("cline", "Cline (VS Code)", tmp_path / code / "Code" / legacy, "cline"),
        ("cline", "Cline (VS Code Insiders)", tmp_path / code / "Code - Insiders" / legacy, "cline"),
        ("lm-studio", "LM Studio", tmp_path / ".lmstudio/mcp.json", "mcpServers"),
    ]
    home = home_with(tmp_path, *SAMPLES, platform=platform)
    found = [(c.client, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [(client, home / relative(client, platform), NAMES[client]) for client in SAMPLES]


def test_the_environment_moves_them(tmp_path: Path) -> None:
    """Zed follows XDG_CONFIG_HOME on Linux only (macOS: ~/.config/zed whatever it says) and APPDATA on
    Windows; Cline's own variables, in its order; LM Studio's home pointer file."""
    other = tmp_path / "elsewhere"

    def where(platform: str, env: dict[str, str]) -> dict[str, Path]:
        return {w.label: w.path for w in client_locations(tmp_path, platform, env)}

    assert where("linux", {"XDG_CONFIG_HOME": str(other)})["Zed"] == other / "zed/settings.json"
    assert where("darwin", {"XDG_CONFIG_HOME": str(other)})["Zed"] == tmp_path / ".config/zed/settings.json"
    assert where("win32", {"appdata": str(other)})["Zed"] == other / "Zed/settings.json"
    assert where("win32", {"APPDATA": str(other)})["Cline (VS Code)"].parts[-7:-4] == ("elsewhere", "Code", "User")
    cline = {
        "CLINE_DIR": str(other / "dir"),
        "CLINE_DATA_DIR": str(other / "data"),
        "CLINE_MCP_SETTINGS_PATH": str(other / "mine.json"),
    }
    assert where("linux", cline)["Cline"] == other / "mine.json"
    del cline["CLINE_MCP_SETTINGS_PATH"]
    assert where("darwin", cline)["Cline"] == other / "data/settings/cline_mcp_settings.json"
    del cline["CLINE_DATA_DIR"]
    assert where("win32", cline)["Cline"] == other / "dir/data/settings/cline_mcp_settings.json"
    assert where("linux", {"CLINE_DIR": "relative/dir"})["Cline"] == tmp_path / CLINE_FILE  # not a folder one can know

    (tmp_path / ".lmstudio-home-pointer").write_text(f"{other / 'lm'}\n")
    assert where("darwin", {})["LM Studio"] == other / "lm/mcp.json"
    (tmp_path / ".lmstudio-home-pointer").write_text("not/absolute")
    assert where("linux", {})["LM Studio"] == tmp_path / ".lmstudio/mcp.json"


def test_not_found_names_the_places_and_a_bare_folder_is_enough(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"Zed not found \(looked at .*zed.settings\.json\)"):
        install_targets("zed", tmp_path, "linux", {})
    (tmp_path / ".lmstudio").mkdir()  # LM Studio ran, its mcp.json not made yet
    [target] = install_targets("lm-studio", tmp_path, "win32", {})
    apply_change(plan_install(target, COMMAND))
    assert parse(target.path.read_bytes()) == {
        "mcpServers": {"mcpmanager": {"command": COMMAND[0], "args": ["connect"]}}
    }
    apply_change(plan_undo(target))
    assert not target.path.exists()
    (tmp_path / ".config/zed").mkdir(parents=True)
    [target] = install_targets("zed", tmp_path, "darwin", {})
    apply_change(plan_install(target, COMMAND, "discovery"))
    entry = {"command": COMMAND[0], "args": ["connect", "--mode", "discovery"], "env": {}}
    assert parse(target.path.read_bytes()) == {"context_servers": {"mcpmanager": entry}}
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Reading -------------------------------------------------------------------------------------------


def test_zed_entries_in_each_form() -> None:
    path = SAMPLES["zed"][0]
    read = read_client_config("zed", path, "zed", home=Path("/home/u"))
    assert read.servers == [
        StdioServerConfig(
            "github",
            "npx",
            ["-y", "@modelcontextprotocol/server-github"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE000000000000000000000000000000zed"},
        ),
        StdioServerConfig("filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/projects"]),
        StdioServerConfig(
            "postgres",
            "uvx",
            ["mcp-server-postgres", "postgresql://localhost/notes"],
            {"PGPASSWORD": "FAKE-zed-pg-password-0000"},
        ),
        HttpServerConfig(
            "remote-mcp-server", "https://mcp.example.com/mcp", {"Authorization": "Bearer FAKE-zed-token-0000"}
        ),
        HttpServerConfig("linear", "https://mcp.linear.example/mcp"),
        StdioServerConfig("time", "uvx", ["mcp-server-time", "--local-timezone=Europe/Paris"], disabled=True),
    ]
    # a profile's `context_servers` (agent.profiles.research) is not a server list: not read
    assert read.problems == [
        f"{path}:65:28: context_servers.mcp-server-context7: a server of a Zed extension: Zed starts it from the "
        "extension; not imported"
    ]


def test_zed_oddities(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    servers = {
        "no-path": {"command": {"args": ["x"]}},
        "odd": {"command": "a", "enabled": "no"},
        "settings-only": {"settings": {"key": "v"}},
    }
    path.write_text(json.dumps({"context_servers": servers}))
    read = read_client_config("zed", path, "zed")
    assert read.servers == [StdioServerConfig("odd", "a")]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        'context_servers.no-path.command: expected "path" in Zed\'s older command object; not imported',
        "context_servers.odd.enabled: expected true or false; read as enabled",
        "context_servers.settings-only: a server of a Zed extension: Zed starts it from the extension; not imported",
    ]


def test_cline_types_as_cline_reads_them(tmp_path: Path) -> None:
    path = SAMPLES["cline"][0]
    read = read_client_config("cline", path, "cline", home=Path("/home/u"))
    weather = "C:\\Users\\user\\Documents\\Cline\\MCP\\weather-server\\build\\index.js"
    assert read.servers == [
        StdioServerConfig(
            BRAVE_NAME,
            "npx",
            ["-y", "@modelcontextprotocol/server-brave-search"],
            {"BRAVE_API_KEY": "FAKE-brave-key-0000"},
        ),
        StdioServerConfig("weather", "node", [weather], {"OPENWEATHER_API_KEY": "FAKE-weather-key-0000"}),
        HttpServerConfig("name2empid", "https://mcp.internal.example/sse", transport="sse"),
        HttpServerConfig(
            "remote-notes", "https://notes.example.com/mcp", {"Authorization": "Bearer FAKE-cline-token-0000"}
        ),
        HttpServerConfig("legacy-events", "https://events.example.com/mcp"),  # transportType "http": Streamable HTTP
        HttpServerConfig("old-sse", "https://old.example.com/sse", transport="sse"),  # no type: SSE, Cline's default
        StdioServerConfig("sqlite", "uvx", ["mcp-server-sqlite", "--db-path", "test.db"], disabled=True),
    ]
    assert read.problems == [
        f"{path}:3:9: mcpServers[\"{BRAVE}\"]: not a name mcpmanager accepts (letters, digits, '-', '_', '.'); "
        f"imported as {BRAVE_NAME!r}"
    ]
    odd = tmp_path / "cline_mcp_settings.json"
    entries = {
        "both": {"command": "c", "url": "https://b.example/mcp"},  # stdio comes first in Cline
        "typed-sse": {"type": "sse", "command": "c", "url": "https://s.example/sse"},
        "legacy-sse": {"transportType": "sse", "url": "https://l.example/sse"},
        "ws": {"type": "websocket", "url": "wss://w.example"},
    }
    odd.write_text(json.dumps({"mcpServers": entries}))
    read = read_client_config("cline", odd, "cline")
    assert read.servers == [
        StdioServerConfig("both", "c"),
        HttpServerConfig("typed-sse", "https://s.example/sse", transport="sse"),
        HttpServerConfig("legacy-sse", "https://l.example/sse", transport="sse"),
    ]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "mcpServers.ws.type: unknown type 'websocket' (Cline's are stdio, sse and streamableHttp); not imported"
    ]


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", list(SAMPLES))
def test_import_dry_run_then_import(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client, platform=platform)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import(client, config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES[client] and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES[client]
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES[client]
    loaded = load_config(config).servers
    if client == "zed":
        assert saved["postgres"] == {
            "command": "uvx",
            "args": ["mcp-server-postgres", "postgresql://localhost/notes"],
            "env": {"PGPASSWORD": "FAKE-zed-pg-password-0000"},
        }
        assert loaded["time"].disabled and not loaded["filesystem"].disabled
    elif client == "cline":
        assert saved["old-sse"] == {"type": "sse", "url": "https://old.example.com/sse"}
        assert saved["remote-notes"]["type"] == "http" and "transportType" not in saved["legacy-events"]
        assert loaded["sqlite"].disabled
    else:
        assert loaded["hf-mcp-server"] == HttpServerConfig(
            "hf-mcp-server",
            "https://huggingface.co/mcp",
            {"Authorization": "Bearer hf_FAKE00000000000000000000lmstudio"},
        )
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import(client, config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES[client])


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", list(SAMPLES))
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client, platform=platform)
    original = files_under(home)
    [target] = install_targets(client, home, platform, {})
    assert target.path == home / relative(client, platform)
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after.removeprefix(b"\xef\xbb\xbf"))
    entry = {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert servers_of(client, doc).pop("mcpmanager") == ({**entry, "env": {}} if client == "zed" else entry)
    assert doc == parse(before.removeprefix(b"\xef\xbb\xbf"))  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    if client == "cline":  # its CRLF line ends and 4-space indents, followed
        assert after.count(b"\n") == after.count(b"\r\n") and '\r\n            "command"' in added
    elif client == "lm-studio":  # its byte-order mark and tabs
        assert after.startswith(b"\xef\xbb\xbf{") and "\t\t\t" in added
    else:  # JSONC: its trailing commas, followed
        assert added.rstrip().endswith("},") and "\r" not in added
    assert backup is not None and backup.read_bytes() == before and backup.parent == target.path.parent
    assert inspect(target).mode == "direct"

    again = plan_install(target, COMMAND, "direct")
    assert not again.changed and apply_change(again) is None

    undo = plan_undo(target)
    assert undo.changed and undo.exact and undo.restore == backup
    apply_change(undo)
    assert files_under(home) == original  # byte for byte, and the backup gone
    assert inspect(target).mode is None


@pytest.mark.parametrize("client", list(SAMPLES))
def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import(client, config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets(client, home, "linux", {})
    assert inspect(target, config, home).served == tuple(SERVED[client])

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    assert list(change.moved) == SERVED[client]  # Zed's time and Cline's sqlite are off already: left alone
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    before = parse(original[relative(client)].removeprefix(b"\xef\xbb\xbf"))
    servers = servers_of(client, doc)
    if client == "zed":  # Zed's own switch, each entry otherwise as it was
        assert [n for n, s in servers.items() if s.get("enabled", True)] == ["mcp-server-context7", "mcpmanager"]
        assert {n: {k: v for k, v in s.items() if k != "enabled"} for n, s in servers.items() if n != "mcpmanager"} == {
            n: {k: v for k, v in s.items() if k != "enabled"} for n, s in servers_of(client, before).items()
        }
        assert STASH_KEY not in doc and doc["agent"] == before["agent"]
    elif client == "cline":  # Cline's own switch
        assert [n for n, s in servers.items() if not s.get("disabled", False)] == ["mcpmanager"]
        assert servers[BRAVE]["autoApprove"] == ["brave_web_search"] and STASH_KEY not in doc
    else:  # LM Studio documents no switch: the stash
        assert list(servers) == ["mcpmanager"] and list(doc[STASH_KEY]) == SERVED[client]
    assert inspect(target, config, home).disabled == tuple(SERVED[client])
    assert inspect(target, config, home).served == ()

    undo = plan_undo(target)
    assert undo.exact and list(undo.moved) == SERVED[client]
    apply_change(undo)
    assert files_under(home) == original
    assert inspect(target, config, home).disabled == ()


@pytest.mark.parametrize("client", ["zed", "cline"])
def test_undo_after_the_client_rewrote_its_file_keeps_the_change(tmp_path: Path, client: str) -> None:
    """Zed edits its settings.json itself (Cline its file too): undo then takes out mcpmanager's entry
    and gives each server it turned off its switch back as the file had it before the install."""
    home = home_with(tmp_path, client)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import(client, config_path, home, "linux", {}), config_path)
    [target] = install_targets(client, home, "linux", {})
    before = target.path.read_bytes()
    apply_change(plan_install(target, COMMAND, config=load_config(config_path), disable_served=True, home=home))
    old, new = (
        (b'"vim_mode": true', b'"vim_mode": false') if client == "zed" else (b'"timeout": 120', b'"timeout": 300')
    )
    target.path.write_bytes(target.path.read_bytes().replace(old, new))

    undo = plan_undo(target)
    assert undo.changed and not undo.exact and list(undo.moved) == SERVED[client]
    assert (
        "your edits are kept, only mcpmanager's entry removed and the servers it turned off turned on again"
        in (undo.notes[0])
    )
    apply_change(undo)
    assert target.path.read_bytes() == before.replace(old, new)  # every switch as it was, key for key
    assert list_backups(target.path)[0].read_bytes() == before  # kept for the user


@pytest.mark.parametrize("client", list(SAMPLES))
def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path, client: str) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env and headers (Zed's
    older nested command object too), are masked."""
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff


@pytest.mark.parametrize("client", list(SAMPLES))
def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path, client: str) -> None:
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    target.path.write_bytes(target.path.read_bytes().replace(b'"args"', b'"args" "', 1))
    original = files_under(home)
    with pytest.raises(InstallError, match=rf"^{target.path}:\d+:\d+: invalid JSON: .*; not changed$"):
        plan_install(target, COMMAND)
    with pytest.raises(InstallError, match="invalid JSON"):
        plan_undo(target)
    assert inspect(target).problem is not None
    [read] = find_client_configs(home, "linux", {})
    assert read.servers == [] and [p.split(": ", 1)[1].split(":", 1)[0] for p in read.problems] == ["invalid JSON"]
    assert files_under(home) == original


def test_both_cline_files_are_written_and_undone(tmp_path: Path) -> None:
    """A user with Cline's current file and the one its VS Code extension kept before: import reads
    both (the same servers once), install writes both, undo restores both."""
    home = home_with(tmp_path, "cline", platform="win32")
    legacy = home / "AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b'{\n  "mcpServers": {\n    "old": {"command": "old-server"}\n  }\n}\n')
    original = files_under(home)
    plan = plan_import("cline", tmp_path / "config.json", home, "win32", {})
    assert [a.name for a in plan.added] == [*NAMES["cline"], "old"]
    targets = install_targets("cline", home, "win32", {})
    assert [(t.label, t.path) for t in targets] == [("Cline", home / CLINE_FILE), ("Cline (VS Code)", legacy)]
    for target in targets:
        apply_change(plan_install(target, COMMAND))
    assert "mcpmanager" in parse(legacy.read_bytes())["mcpServers"]
    for target in targets:
        apply_change(plan_undo(target))
    assert files_under(home) == original
