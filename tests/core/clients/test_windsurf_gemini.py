"""Windsurf (`~/.codeium/windsurf/mcp_config.json`) and Gemini CLI (`~/.gemini/settings.json`), on
Linux, macOS and Windows: where their files are, how their own keys are read (Windsurf's `serverUrl`,
Gemini CLI's `httpUrl` and `url`), and the round trips on the sample files of tests/data/clients
(written from each client's documentation): import dry run and real, install with every byte outside
mcpmanager's entry kept, undo byte for byte, turning off what mcpmanager serves, secrets masked."""

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
from mcpmanager.core.clients.errors import ClientNotFound
from mcpmanager.core.clients.importing import ImportPlan, plan_import
from mcpmanager.core.clients.install import STASH_KEY, inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import find_client_configs, read_client_config
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig
from mcpmanager.core.engine.control import Control

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
# client → (its sample, where it stands under the home folder)
SAMPLES = {
    "windsurf": (DATA / "windsurf" / "mcp_config.json", ".codeium/windsurf/mcp_config.json"),
    "gemini-cli": (DATA / "gemini-cli" / "settings.json", ".gemini/settings.json"),
}
PLATFORMS = ["linux", "darwin", "win32"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
FAKE_SECRETS = [
    "ghp_FAKE000000000000000000000000windsurf",
    "FAKE-windsurf-token-0000",
    "ghp_FAKE0000000000000000000000000gemini",
    "FAKE-amap-key-0000",
]
WINDSURF_NAMES = ["github", "figma", "talaria", "tidewave", "git"]
GEMINI_NAMES = [
    "pythonTools",
    "nodeServer",
    "githubCopilot",
    "amap",
    "discoveredServer",
    "typedServer",
    "filteredServer",
]


def home_with(tmp_path: Path, *clients: str) -> Path:
    home = tmp_path / "home"
    for client in clients:
        sample, relative = SAMPLES[client]
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, home / relative)
    home.mkdir(exist_ok=True)
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def parse(data: bytes) -> dict[str, Any]:
    value = json.loads(clean_jsonc(data.decode("utf-8")))
    assert isinstance(value, dict)
    return value


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
    places = {w.client: (w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})}
    assert places["windsurf"] == ("Windsurf", tmp_path / ".codeium/windsurf/mcp_config.json", "windsurf")
    assert places["gemini-cli"] == ("Gemini CLI", tmp_path / ".gemini/settings.json", "gemini")
    home = home_with(tmp_path, "windsurf", "gemini-cli")
    found = [(c.client, c.label, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [
        ("windsurf", "Windsurf", home / SAMPLES["windsurf"][1], WINDSURF_NAMES),
        ("gemini-cli", "Gemini CLI", home / SAMPLES["gemini-cli"][1], GEMINI_NAMES),
    ]


def test_gemini_cli_home_moves_the_gemini_folder(tmp_path: Path) -> None:
    """Gemini CLI takes `GEMINI_CLI_HOME` for the home folder (case-insensitive on Windows)."""
    other = tmp_path / "profile"
    for platform, key in (("linux", "GEMINI_CLI_HOME"), ("darwin", "GEMINI_CLI_HOME"), ("win32", "gemini_cli_home")):
        places = {w.client: w.path for w in client_locations(tmp_path, platform, {key: str(other)})}
        assert places["gemini-cli"] == other / ".gemini" / "settings.json", platform
        assert places["windsurf"] == tmp_path / ".codeium/windsurf/mcp_config.json"
    relative = {w.client: w.path for w in client_locations(tmp_path, "linux", {"GEMINI_CLI_HOME": "rel/dir"})}
    assert relative["gemini-cli"] == tmp_path / ".gemini" / "settings.json"  # not a folder one can know


def test_not_found_names_the_place_and_a_bare_folder_is_enough(tmp_path: Path) -> None:
    with pytest.raises(ClientNotFound, match=r"Gemini CLI not found \(looked at .*\.gemini.settings\.json\)"):
        install_targets("gemini-cli", tmp_path, "linux", {})
    (tmp_path / ".codeium/windsurf").mkdir(parents=True)  # Windsurf ran, its file not made yet
    [target] = install_targets("windsurf", tmp_path, "win32", {})
    apply_change(plan_install(target, COMMAND))
    entry = {"command": COMMAND[0], "args": ["connect"]}
    assert parse(target.path.read_bytes()) == {"mcpServers": {"mcpmanager": entry}}
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Reading -------------------------------------------------------------------------------------------


def test_windsurf_server_url_is_the_url() -> None:
    path = SAMPLES["windsurf"][0]
    read = read_client_config("windsurf", path, "windsurf", home=Path("/home/u"))
    github_env = {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE000000000000000000000000windsurf"}
    assert read.servers == [
        StdioServerConfig("github", "npx", ["-y", "@modelcontextprotocol/server-github"], github_env),
        HttpServerConfig("figma", "https://mcp.figma.example/mcp", {"Authorization": "Bearer ${env:AUTH_TOKEN}"}),
        HttpServerConfig(
            "talaria", "https://api.talaria.example/mcp", {"Authorization": "Bearer FAKE-windsurf-token-0000"}
        ),
        HttpServerConfig("tidewave", "http://localhost:4000/tidewave/mcp"),
        StdioServerConfig("git", "py", ["-m", "mcp_server_git"], disabled=True),
    ]
    assert read.problems == [
        f"{path}:8:13: mcpServers.figma: uses ${{env:AUTH_TOKEN}}: left as written (mcpmanager does not expand them)"
    ]


def test_gemini_http_url_url_and_type() -> None:
    path = SAMPLES["gemini-cli"][0]
    read = read_client_config("gemini-cli", path, "gemini", home=Path("/home/u"))
    python_env = {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"}
    copilot = {"Authorization": "Bearer ghp_FAKE0000000000000000000000000gemini"}
    assert read.servers == [
        StdioServerConfig(
            "pythonTools", "python", ["-m", "my_mcp_server", "--port", "8080"], python_env, "./mcp-servers/python"
        ),
        StdioServerConfig("nodeServer", "node", ["dist/server.js", "--verbose"]),  # trust: not mcpmanager's
        HttpServerConfig("githubCopilot", "https://api.githubcopilot.example/mcp/", copilot, transport="http"),
        HttpServerConfig("amap", "https://mcp.amap.example/mcp?key=FAKE-amap-key-0000", transport="http"),
        HttpServerConfig("discoveredServer", "https://api.example.com/sse", transport="sse"),
        HttpServerConfig("typedServer", "https://mcp.example.com/mcp", transport="http"),
        StdioServerConfig("filteredServer", "python", ["-m", "my_mcp_server"]),
    ]
    assert read.problems == [
        f"{path}:11:20: mcpServers.pythonTools: uses ${{EXTERNAL_API_KEY}}, $DB_CONNECTION_STRING: left as "
        "written (mcpmanager does not expand them)",
        f"{path}:34:14: mcpServers.discoveredServer.url: read as SSE, as Gemini CLI's documentation has it (newer "
        'Gemini CLI tries Streamable HTTP first): if the server speaks Streamable HTTP, make its type "http" in '
        "mcpmanager",
    ]
    assert not [secret for secret in FAKE_SECRETS for line in read.problems if secret in line]


def test_which_key_wins_as_in_each_client(tmp_path: Path) -> None:
    gemini = tmp_path / "settings.json"
    servers = {
        "all": {"httpUrl": "https://a.example/mcp", "url": "https://a.example/sse", "command": "a"},
        "both": {"url": "https://b.example/sse", "command": "b"},
        "sse": {"url": "https://c.example/sse", "type": "sse"},
    }
    gemini.write_text(json.dumps({"mcpServers": servers}))
    read = read_client_config("gemini-cli", gemini, "gemini")
    assert read.servers == [
        HttpServerConfig("all", "https://a.example/mcp"),
        HttpServerConfig("both", "https://b.example/sse", transport="sse"),
        HttpServerConfig("sse", "https://c.example/sse", transport="sse"),
    ]
    first = "not read: Gemini CLI uses httpUrl before url, and a URL before command"
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        f"mcpServers.all.url: {first}",
        f"mcpServers.all.command: {first}",
        "mcpServers.both.url: read as SSE, as Gemini CLI's documentation has it (newer Gemini CLI tries "
        'Streamable HTTP first): if the server speaks Streamable HTTP, make its type "http" in mcpmanager',
        f"mcpServers.both.command: {first}",
    ]
    windsurf = tmp_path / "mcp_config.json"
    entries = {"same": {"serverUrl": "https://s.example/mcp", "url": "https://s.example/mcp"}}
    entries["other"] = {"serverUrl": "https://o.example/mcp", "url": "https://elsewhere.example/mcp"}
    windsurf.write_text(json.dumps({"mcpServers": entries}))
    read = read_client_config("windsurf", windsurf, "windsurf")
    assert read.servers == [
        HttpServerConfig("same", "https://s.example/mcp"),
        HttpServerConfig("other", "https://o.example/mcp"),
    ]
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "mcpServers.other.url: not read: serverUrl is written too, and comes first"
    ]
    # The same keys in Claude Desktop's or Cursor's file are not theirs: not read there.
    plain = read_client_config("cursor", windsurf, "mcpServers")
    assert [s.name for s in plain.servers] == ["same", "other"]
    assert {s.url for s in plain.servers if isinstance(s, HttpServerConfig)} == {
        "https://s.example/mcp",
        "https://elsewhere.example/mcp",
    }


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", list(SAMPLES))
def test_import_dry_run_then_import(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import(client, config, home, platform, {})
    names = WINDSURF_NAMES if client == "windsurf" else GEMINI_NAMES
    assert [a.name for a in plan.added] == names and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == names
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == names
    if client == "windsurf":
        assert saved["figma"]["url"] == "https://mcp.figma.example/mcp" and "serverUrl" not in saved["figma"]
        assert load_config(config).servers["figma"] == HttpServerConfig(
            "figma", "https://mcp.figma.example/mcp", {"Authorization": "Bearer ${env:AUTH_TOKEN}"}
        )
    else:
        assert saved["discoveredServer"] == {"type": "sse", "url": "https://api.example.com/sse"}
        assert load_config(config).servers["githubCopilot"] == HttpServerConfig(
            "githubCopilot",
            "https://api.githubcopilot.example/mcp/",
            {"Authorization": "Bearer ghp_FAKE0000000000000000000000000gemini"},
        )
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import(client, config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(names)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("client", list(SAMPLES))
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, client: str, platform: str) -> None:
    home = home_with(tmp_path, client)
    original = files_under(home)
    [target] = install_targets(client, home, platform, {})
    assert target.path == home / SAMPLES[client][1]
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after)
    assert doc["mcpServers"].pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    if client == "gemini-cli":  # its allowlist names mcpmanager too, or Gemini CLI blocks it
        assert doc["mcp"]["allowed"].pop() == "mcpmanager"
    assert doc == parse(before)  # every other setting and server, as it was
    kept = before.decode("utf-8")
    if client == "gemini-cli":  # the list, on its one line, gains the name and nothing else
        kept = kept.replace('"discoveredServer"]', '"discoveredServer", "mcpmanager"]', 1)
    added = inserted_only(kept, after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    if client == "windsurf":  # its CRLF line ends and tabs, followed
        assert "\r\n" in added and after.count(b"\n") == after.count(b"\r\n") and "\t\t" in added
    else:
        assert "\r" not in added and "\n    " in added
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

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    # Servers read through the client's own keys (serverUrl, httpUrl, url) are recognised as served.
    served = [n for n in (WINDSURF_NAMES if client == "windsurf" else GEMINI_NAMES) if n != "git"]
    assert list(change.moved) == served  # Windsurf's disabled git is not served: it stays
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes())
    assert list(doc["mcpServers"]) == (["git", "mcpmanager"] if client == "windsurf" else ["mcpmanager"])
    assert list(doc[STASH_KEY]) == served
    assert inspect(target, config, home).disabled == tuple(served)

    apply_change(plan_undo(target))
    assert files_under(home) == original


@pytest.mark.parametrize("client", list(SAMPLES))
def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path, client: str) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env, headers and the
    client's own URL keys (Windsurf's serverUrl, Gemini CLI's httpUrl), are masked."""
    home = home_with(tmp_path, client)
    [target] = install_targets(client, home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff and ("https://mcp.amap.example/mcp?key=***" in diff or client == "windsurf")


def test_undo_after_gemini_rewrote_its_settings_keeps_the_change(tmp_path: Path) -> None:
    home = home_with(tmp_path, "gemini-cli")
    [target] = install_targets("gemini-cli", home, "linux", {})
    before = parse(target.path.read_bytes())
    apply_change(plan_install(target, COMMAND))
    target.path.write_text(target.path.read_text().replace('"theme": "Dracula"', '"theme": "GitHub"'))
    undo = plan_undo(target)
    assert undo.changed and not undo.exact
    apply_change(undo)
    doc = parse(target.path.read_bytes())
    assert doc["theme"] == "GitHub" and "mcpmanager" not in doc["mcpServers"]
    assert doc == {**before, "theme": "GitHub"}
    assert "// Gemini CLI's user settings" in target.path.read_text()
    assert list_backups(target.path)[0].read_bytes() == SAMPLES["gemini-cli"][0].read_bytes()
