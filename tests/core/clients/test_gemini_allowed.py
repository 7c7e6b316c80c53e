"""Gemini CLI's `mcp.allowed` allowlist: what mcpmanager writes into its settings joins the list, or
Gemini CLI blocks it (seen with Gemini CLI 0.61); files without the list get none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from mcpmanager.core.clients.backups import apply_change
from mcpmanager.core.clients.export import apply_export, plan_export
from mcpmanager.core.clients.export_undo import apply_export_undo, plan_export_undo
from mcpmanager.core.clients.install import install_targets, plan_install, plan_undo
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import parse_config

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "clients" / "gemini-cli" / "settings.json"
LISTED = ["pythonTools", "nodeServer", "githubCopilot", "discoveredServer"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]


def settings_in(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    if text is None:
        shutil.copyfile(SAMPLE, path)
    else:
        path.write_text(text)
    return path


def read(path: Path) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(clean_jsonc(path.read_text()))
    return parsed


def test_install_adds_mcpmanager_to_the_list_and_an_edited_file_s_undo_takes_it_out(tmp_path: Path) -> None:
    path = settings_in(tmp_path)
    [target] = install_targets("gemini-cli", tmp_path, "linux", {})
    apply_change(plan_install(target, COMMAND))
    assert read(path)["mcp"]["allowed"] == [*LISTED, "mcpmanager"]
    assert plan_install(target, COMMAND).changed is False  # installed again: listed once
    path.write_text(path.read_text().replace('"theme": "Dracula"', '"theme": "GitHub"'))
    apply_change(plan_undo(target))
    assert read(path)["mcp"]["allowed"] == LISTED and read(path)["theme"] == "GitHub"


def test_a_file_without_the_list_gets_none(tmp_path: Path) -> None:
    path = settings_in(tmp_path, '{\n  "theme": "Dracula"\n}\n')
    [target] = install_targets("gemini-cli", tmp_path, "linux", {})
    apply_change(plan_install(target, COMMAND))
    assert "mcp" not in read(path) and "mcpmanager" in read(path)["mcpServers"]


def test_export_adds_what_it_writes_and_its_undo_restores_the_file(tmp_path: Path) -> None:
    path = settings_in(tmp_path)
    original = path.read_bytes()
    [target] = install_targets("gemini-cli", tmp_path, "linux", {})
    config = parse_config(json.dumps({"mcpServers": {"clock": {"command": "uvx", "args": ["t"]}}}), "c.json")
    apply_export(plan_export(target, list(config.servers.values()), home=tmp_path))
    assert read(path)["mcp"]["allowed"] == [*LISTED, "clock"]
    apply_export_undo(plan_export_undo(target))
    assert path.read_bytes() == original
