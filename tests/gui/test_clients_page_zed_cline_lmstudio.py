"""The Clients page with Zed, Cline and LM Studio found (their sample files, tests/data/clients):
listed under their own names, installed from the page (Zed's JSONC settings keep every other byte)
and undone byte for byte."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from mcpmanager.gui.clients_page import ClientRow, ClientsPage
from tests.helpers.client_samples import files_under, parse
from tests.helpers.gui import gui_context, until

COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "clients"


def row_of(page: ClientsPage, label: str) -> ClientRow:
    return next(row for row in page.rows if row.target.label == label)


async def test_zed_cline_and_lm_studio_are_listed_installed_and_undone(tmp_path: Path, qtbot: QtBot) -> None:
    home = tmp_path / "user"
    for relative, sample in (
        (".config/zed/settings.json", SAMPLES / "zed/settings.json"),
        (".cline/data/settings/cline_mcp_settings.json", SAMPLES / "cline/cline_mcp_settings.json"),
        (".lmstudio/mcp.json", SAMPLES / "lm-studio/mcp.json"),
    ):
        (home / relative).parent.mkdir(parents=True)
        (home / relative).write_bytes(sample.read_bytes())
    original = files_under(home)
    zed = home / ".config/zed/settings.json"
    async with gui_context(tmp_path / "engine", {}) as ctx:
        page = ClientsPage(ctx, home=home, platform="linux", env={}, command=COMMAND)
        qtbot.addWidget(page)
        await until(lambda: len(page.rows) == 3)
        assert [(r.target.label, r.target.path.relative_to(home).as_posix()) for r in page.rows] == [
            ("Zed", ".config/zed/settings.json"),
            ("Cline", ".cline/data/settings/cline_mcp_settings.json"),
            ("LM Studio", ".lmstudio/mcp.json"),
        ]
        assert all(r.state.text() == "not installed" and r.import_.isEnabled() for r in page.rows)
        row_of(page, "Zed").install.click()
        await until(lambda: page.preview is not None and page.preview.isVisible())
        assert page.preview is not None
        diff = page.preview.diff.toPlainText()
        assert '+    "mcpmanager": {' in diff and "FAKE-zed-token-0000" not in diff
        assert files_under(home) == original
        page.preview.accept()
        await until(lambda: "mcpmanager" in parse(zed)["context_servers"])  # type: ignore[operator]
        assert parse(zed)["vim_mode"] is True and "// Zed settings" in zed.read_text()
        await until(lambda: row_of(page, "Zed").undo.isEnabled())
        row_of(page, "Zed").undo.click()
        await until(lambda: page.preview is not None and page.preview.change.action == "undo")
        assert page.preview is not None
        page.preview.accept()
        await until(lambda: files_under(home) == original)  # byte for byte, the backup gone
        assert not ctx.errors.problems
