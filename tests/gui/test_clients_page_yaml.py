"""The Clients page with Goose's and Continue's YAML files (tests/data/clients/goose and continue):
both listed (Continue's block file is not a row: it is never written), installed from the page with
every other byte kept, undone byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from pytestqt.qtbot import QtBot

from mcpmanager.gui.clients_page import ClientRow, ClientsPage
from tests.helpers.client_samples import files_under
from tests.helpers.gui import gui_context, until

COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
DATA = Path(__file__).resolve().parents[1] / "data" / "clients"


def row_of(page: ClientsPage, label: str) -> ClientRow:
    return next(row for row in page.rows if row.target.label == label)


async def test_goose_and_continue_are_listed_installed_and_undone(tmp_path: Path, qtbot: QtBot) -> None:
    home = tmp_path / "user"
    shutil.copytree(DATA / "goose", home / ".config/goose")
    shutil.copytree(DATA / "continue", home / ".continue")
    original = files_under(home)
    paths = {"Goose": home / ".config/goose/config.yaml", "Continue": home / ".continue/config.yaml"}
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 2)
        assert [(r.target.label, r.target.path) for r in page.rows] == list(paths.items())
        for label, path in paths.items():
            row_of(page, label).install.click()
            await until(lambda: page.preview is not None and page.preview.isVisible())
            assert page.preview is not None
            diff = page.preview.diff.toPlainText()
            assert ("+    mcpmanager:" if label == "Goose" else "+- name: mcpmanager") in diff
            assert "FAKE-goose-token-0000" not in diff and "FAKE-continue-fetch-0000" not in diff
            page.preview.accept()
            await until(lambda path=path: b"mcpmanager" in path.read_bytes())  # type: ignore[misc]
            doc = yaml.safe_load(path.read_text())
            assert "mcpmanager" in (
                doc["extensions"] if label == "Goose" else [s.get("name") for s in doc["mcpServers"]]
            )
            await until(lambda label=label: row_of(page, label).undo.isEnabled())  # type: ignore[misc]
            row_of(page, label).undo.click()
            await until(lambda: page.preview is not None and page.preview.change.action == "undo")
            assert page.preview is not None
            page.preview.accept()
            await until(lambda path=path: b"mcpmanager" not in path.read_bytes())  # type: ignore[misc]
        await until(lambda: files_under(home) == original)
        assert not ctx.errors.problems
