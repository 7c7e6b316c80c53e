"""LM Studio (`mcp.json`, Cursor's notation), on Linux, macOS and Windows: where its file is (its home
pointer too), and the round trips on its sample file of tests/data/clients (written from its
documentation; a byte-order mark, tabs, no final line end): import dry run and real, install with
every byte outside mcpmanager's entry kept, undo byte for byte, turning off what mcpmanager serves
with the stash (LM Studio documents no switch), secrets masked, a file that does not read refused.
What every client's sample goes through is in test_contract.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.change import Change
from mcpmanager.core.clients.errors import InstallError
from mcpmanager.core.clients.importing import plan_import
from mcpmanager.core.clients.install import STASH_KEY, inspect, install_targets, plan_install, plan_undo
from mcpmanager.core.clients.locations import client_locations
from mcpmanager.core.clients.reading import find_client_configs
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import HttpServerConfig
from tests.core.clients.sample_files import (
    COMMAND,
    DATA,
    PLATFORMS,
    apply_import,
    files_under,
    home_with,
    inserted_only,
    parse,
)

SAMPLE = (DATA / "lm-studio" / "mcp.json", ".lmstudio/mcp.json")  # the same on every platform
NAMES = ["hf-mcp-server", "docs-mcp-server", "playwright"]
SERVED = NAMES
FAKE_SECRETS = ["hf_FAKE00000000000000000000lmstudio", "FAKE-lmstudio-key-0000"]
BOM = b"\xef\xbb\xbf"


def servers_of(doc: dict[str, Any]) -> dict[str, Any]:
    servers = doc["mcpServers"]
    assert isinstance(servers, dict)
    return servers


# Where ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_place_on_every_platform(tmp_path: Path, platform: str) -> None:
    places = [(w.client, w.label, w.path, w.layout) for w in client_locations(tmp_path, platform, {})]
    assert [p for p in places if p[0] == "lm-studio"] == [
        ("lm-studio", "LM Studio", tmp_path / ".lmstudio/mcp.json", "mcpServers")
    ]
    home = home_with(tmp_path, SAMPLE)
    found = [(c.client, c.path, [s.name for s in c.servers]) for c in find_client_configs(home, platform, {})]
    assert found == [("lm-studio", home / SAMPLE[1], NAMES)]


def test_the_home_pointer_moves_it(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"

    def where(platform: str, env: dict[str, str]) -> dict[str, Path]:
        return {w.label: w.path for w in client_locations(tmp_path, platform, env)}

    (tmp_path / ".lmstudio-home-pointer").write_text(f"{other / 'lm'}\n")
    assert where("darwin", {})["LM Studio"] == other / "lm/mcp.json"
    (tmp_path / ".lmstudio-home-pointer").write_text("not/absolute")
    assert where("linux", {})["LM Studio"] == tmp_path / ".lmstudio/mcp.json"


def test_a_bare_folder_is_enough(tmp_path: Path) -> None:
    (tmp_path / ".lmstudio").mkdir()  # LM Studio ran, its mcp.json not made yet
    [target] = install_targets("lm-studio", tmp_path, "win32", {})
    apply_change(plan_install(target, COMMAND))
    assert parse(target.path.read_bytes()) == {
        "mcpServers": {"mcpmanager": {"command": COMMAND[0], "args": ["connect"]}}
    }
    apply_change(plan_undo(target))
    assert not target.path.exists()


# Import --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_import_dry_run_then_import(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config = tmp_path / "mcpmanager" / "config.json"
    plan = plan_import("lm-studio", config, home, platform, {})
    assert [a.name for a in plan.added] == NAMES and plan.skipped == []
    assert not config.exists() and files_under(home) == original  # the preview writes nothing

    done = apply_import(plan, config)
    assert [a.name for a in done.added] == NAMES
    saved = json.loads(config.read_text())["mcpServers"]
    assert list(saved) == NAMES
    assert load_config(config).servers["hf-mcp-server"] == HttpServerConfig(
        "hf-mcp-server",
        "https://huggingface.co/mcp",
        {"Authorization": "Bearer hf_FAKE00000000000000000000lmstudio"},
    )
    assert files_under(home) == original  # the client's file is only read

    again = apply_import(plan_import("lm-studio", config, home, platform, {}), config)
    assert again.added == [] and len(again.skipped) == len(NAMES)


# Install and undo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_install_keeps_every_other_byte_and_undo_restores_them(tmp_path: Path, platform: str) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    [target] = install_targets("lm-studio", home, platform, {})
    assert target.path == home / SAMPLE[1]
    before = target.path.read_bytes()

    change = plan_install(target, COMMAND, "direct")
    assert files_under(home) == original  # the preview writes nothing
    backup = apply_change(change)
    after = target.path.read_bytes()
    assert after == change.after
    doc = parse(after.removeprefix(BOM))
    assert servers_of(doc).pop("mcpmanager") == {"command": COMMAND[0], "args": ["connect", "--mode", "direct"]}
    assert doc == parse(before.removeprefix(BOM))  # every other setting and server, as it was
    added = inserted_only(before.decode("utf-8"), after.decode("utf-8"))  # every other byte, in order
    assert added.lstrip(",").lstrip().startswith('"mcpmanager": {') and added.count('"mcpmanager"') == 1
    assert after.startswith(BOM + b"{") and "\t\t\t" in added  # its byte-order mark and tabs
    assert backup is not None and backup.read_bytes() == before and backup.parent == target.path.parent
    assert inspect(target).mode == "direct"

    again = plan_install(target, COMMAND, "direct")
    assert not again.changed and apply_change(again) is None

    undo = plan_undo(target)
    assert undo.changed and undo.exact and undo.restore == backup
    apply_change(undo)
    assert files_under(home) == original  # byte for byte, and the backup gone
    assert inspect(target).mode is None


def test_import_then_install_turning_off_what_mcpmanager_serves_then_undo(tmp_path: Path) -> None:
    home = home_with(tmp_path, SAMPLE)
    original = files_under(home)
    config_path = tmp_path / "mcpmanager" / "config.json"
    apply_import(plan_import("lm-studio", config_path, home, "linux", {}), config_path)
    config = load_config(config_path)
    [target] = install_targets("lm-studio", home, "linux", {})
    assert inspect(target, config, home).served == tuple(SERVED)

    change = plan_install(target, COMMAND, config=config, disable_served=True, home=home)
    assert list(change.moved) == SERVED
    diff = change.diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []  # the preview masks them
    apply_change(change)
    doc = parse(target.path.read_bytes().removeprefix(BOM))
    # LM Studio documents no switch: the stash
    assert list(servers_of(doc)) == ["mcpmanager"] and list(doc[STASH_KEY]) == SERVED
    assert inspect(target, config, home).disabled == tuple(SERVED)
    assert inspect(target, config, home).served == ()

    undo = plan_undo(target)
    assert undo.exact and list(undo.moved) == SERVED
    apply_change(undo)
    assert files_under(home) == original
    assert inspect(target, config, home).disabled == ()


def test_the_preview_masks_the_secrets_of_every_server_there(tmp_path: Path) -> None:
    """Every line of the sample in a diff (all of it removed): its secrets, in env and headers, are masked."""
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("lm-studio", home, "linux", {})
    before = target.path.read_bytes()
    diff = Change(target, "install", before, b"{}\n").diff()
    assert [secret for secret in FAKE_SECRETS if secret in diff] == []
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == len(before.decode("utf-8").splitlines())
    assert "***" in diff


def test_a_file_that_does_not_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = home_with(tmp_path, SAMPLE)
    [target] = install_targets("lm-studio", home, "linux", {})
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
