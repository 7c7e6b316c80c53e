"""What every dialect promises, on every sample file of tests/data/clients: import reads its servers;
install (turning off what mcpmanager then serves) then undo gives the file back byte for byte; export
then import gives the servers exported; export then its undo gives the file back byte for byte.

A sample folder is named after the key of the client it is for (or the key and `-` and more, for a
second sample); its files stand where the table's first place of that client is, in the user's home
folder on Linux (`HOMES`, read from the table). A new client is a row of the clients' table and a
sample folder here (plus a dialect only when its file layout is new): this suite then runs on it as
on every other."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcpmanager.core.clients.backups import apply_change, list_backups
from mcpmanager.core.clients.change import Target
from mcpmanager.core.clients.export import apply_export, plan_export
from mcpmanager.core.clients.export_undo import apply_export_undo, plan_export_undo
from mcpmanager.core.clients.importing import plan_for, read_client, same_definition
from mcpmanager.core.clients.install import inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import BY_KEY, client_locations
from mcpmanager.core.clients.reading import read_client_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.config.servers import HttpServerConfig, ServerConfig, StdioServerConfig

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
SAMPLES = sorted(folder.name for folder in DATA.iterdir() if folder.is_dir())


def _client_of(sample: str) -> str | None:
    """The key a sample folder is named after (`opencode-v2`: another sample of `opencode`), or None."""
    keys = [key for key in BY_KEY if sample == key or sample.startswith(f"{key}-")]
    return max(keys, key=len) if keys else None


def _where(client: str) -> str:
    """Where the client's first file stands under the home folder on Linux (its folder), from the table."""
    home = DATA / "a home that is not there"  # nothing in it moves a place (LM Studio's pointer file)
    [first, *_] = [w for w in client_locations(home, "linux", {}) if w.client == client]
    return first.path.parent.relative_to(home).as_posix()


# sample folder → (client, where its files stand under the home folder on Linux): read from the table
HOMES = {sample: (client, _where(client)) for sample in SAMPLES if (client := _client_of(sample)) is not None}
EXPORTED: list[ServerConfig] = [
    StdioServerConfig("mm-local", "uvx", ["mcp-server-fetch", "--ignore-robots-txt"], {"FETCH_TIMEOUT": "30"}),
    HttpServerConfig("mm-remote", "https://mcp.remote.example/mcp", {"X-Team": "tools"}),
]


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def home_with(tmp_path: Path, sample: str) -> tuple[str, Path]:
    client, where = HOMES[sample]
    home = tmp_path / "home"
    shutil.copytree(DATA / sample, home / where)
    return client, home


def the_target(client: str, home: Path) -> Target:
    """The sample's file install and export write (the one that exists)."""
    [target] = [t for t in install_targets(client, home, "linux", {}) if t.path.is_file()]
    return target


def test_every_sample_folder_is_a_client_of_the_table() -> None:
    assert sorted(HOMES) == SAMPLES
    assert all(client in BY_KEY for client, _ in HOMES.values())


@pytest.mark.parametrize("sample", SAMPLES)
def test_install_then_undo_gives_the_file_back_byte_for_byte(tmp_path: Path, sample: str) -> None:
    client, home = home_with(tmp_path, sample)
    original = files_under(home)
    sources = read_client(client, home, "linux", {})
    assert [s for source in sources for s in source.servers], "the sample has servers import reads"
    config = plan_for(client, sources, Config()).config  # mcpmanager with the client's servers imported
    target = the_target(client, home)
    change = plan_install(target, COMMAND, "direct", config=config, disable_served=True, home=home)
    assert change.changed and files_under(home) == original  # the preview writes nothing
    assert apply_change(change) is not None
    assert inspect(target, config, home).mode == "direct"
    again = plan_install(target, COMMAND, "direct", config=config, disable_served=True, home=home)
    assert not again.changed  # installing what is there changes nothing
    undo = plan_undo(target)
    assert undo.exact and undo.restore is not None
    apply_change(undo)
    assert files_under(home) == original and list_backups(target.path) == []
    assert inspect(target).mode is None


@pytest.mark.parametrize("sample", SAMPLES)
def test_export_then_import_gives_the_servers_exported(tmp_path: Path, sample: str) -> None:
    client, home = home_with(tmp_path, sample)
    target = the_target(client, home)
    plan = plan_export(target, EXPORTED, home=home)
    written = [line.name for line in plan.lines if line.mark == "+"]
    assert written, [str(line) for line in plan.lines]  # every client takes at least a local server
    apply_export(plan)
    read = {s.name: s for s in read_client_config(client, target.path, target.layout, home=home).servers}
    for server in EXPORTED:
        if server.name in written:
            assert same_definition(read[server.name], server), (server, read[server.name])


@pytest.mark.parametrize("sample", SAMPLES)
def test_export_then_its_undo_gives_the_file_back_byte_for_byte(tmp_path: Path, sample: str) -> None:
    client, home = home_with(tmp_path, sample)
    original = files_under(home)
    target = the_target(client, home)
    apply_export(plan_export(target, EXPORTED, home=home))
    assert files_under(home) != original
    undo = plan_export_undo(target)
    assert undo.change.restore is not None
    apply_export_undo(undo)
    assert files_under(home) == original
