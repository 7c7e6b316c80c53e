"""The first run: the demo servers run at once; the banner offers the user's clients' servers or to
keep the demo; either choice writes the config file, and the engine follows it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.engine.control import Control
from mcpmanager.core.engine.engine import Engine
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.system.paths import Paths
from mcpmanager.demo import demo_config
from mcpmanager.gui.context import GuiContext
from mcpmanager.gui.engine_signals import EngineSignals
from mcpmanager.gui.errors import ErrorFunnel
from mcpmanager.gui.first_run import FirstRunBanner
from tests.helpers.fixture_servers import FIXTURE_SERVER, fixture
from tests.helpers.gui import settled, until


@asynccontextmanager
async def first_run(folder: Path) -> AsyncIterator[GuiContext]:
    """As `mcpmanager` starts with no config file: the demo servers, nothing written yet."""
    paths = Paths.resolve(env={"MCPMANAGER_HOME": str(folder / "home")})
    assert not paths.config_file.exists()
    engine = Engine(demo_config(paths), paths)
    ctx = GuiContext(
        engine,
        EngineSignals(engine, interval_ms=20),
        Control(engine.paths.config_file, engine),
        ErrorFunnel(),
        demo=True,
    )
    await engine.start()
    try:
        yield ctx
    finally:
        await settled()
        ctx.signals.close()
        await engine.stop()


def client_home(folder: Path, servers: dict[str, Any]) -> Path:
    """A user's home where Claude Desktop (Linux layout) has these servers configured."""
    home = folder / "user"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": servers, "globalShortcut": "Ctrl+Space"}))
    return home


async def test_importing_a_clients_servers_replaces_the_demo(tmp_path: Path, qtbot: QtBot) -> None:
    home = client_home(tmp_path, {"weather": fixture("--name", "weather"), "notes": fixture("--name", "mine")})
    async with first_run(tmp_path) as ctx:
        await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()), timeout=30)
        assert set(ctx.engine.downstreams) == {"notes", "clock"}  # the demo runs before anything is chosen
        banner = FirstRunBanner(ctx, home=home)
        qtbot.addWidget(banner)
        banner.show()
        assert "demo servers (notes, clock)" in banner.message.text()
        texts = [b.text() for b in banner.buttons]
        assert texts == ["Import 2 servers from Claude Desktop", "Keep the demo servers"]
        banner.buttons[0].click()
        await until(lambda: not banner.isVisible())
        written = json.loads(ctx.control.path.read_text())
        assert list(written["mcpServers"]) == ["weather", "notes"]  # the user's own `notes`, not the demo's
        assert written["mcpServers"]["notes"]["args"][-1] == "mine"
        await until(lambda: set(ctx.engine.downstreams) == {"weather", "notes"})
        await until(lambda: all(d.status.state is State.READY for d in ctx.engine.downstreams.values()), timeout=30)
        assert not ctx.demo and ctx.engine.describe()["config"] == str(ctx.control.path)
        assert not ctx.errors.problems


async def test_keeping_the_demo_writes_it_and_no_clients_is_said(tmp_path: Path, qtbot: QtBot) -> None:
    async with first_run(tmp_path) as ctx:
        banner = FirstRunBanner(ctx, home=tmp_path / "empty-home")
        qtbot.addWidget(banner)
        every = "Claude Desktop, Cursor, VS Code, Claude Code, Windsurf, Gemini CLI, Codex, Zed, Cline, LM Studio"
        assert f"No {every}, Goose, Continue, GitHub Copilot CLI or OpenCode config was found" in banner.message.text()
        assert [b.text() for b in banner.buttons] == ["Keep the demo servers"]
        banner.buttons[0].click()
        await until(lambda: ctx.control.path.exists() and not ctx.demo)
        assert list(json.loads(ctx.control.path.read_text())["mcpServers"]) == ["notes", "clock"]


async def test_no_banner_once_a_config_exists(tmp_path: Path, qtbot: QtBot) -> None:
    async with first_run(tmp_path) as ctx:
        ctx.demo = False
        banner = FirstRunBanner(ctx, home=client_home(tmp_path, {"x": fixture()}))
        qtbot.addWidget(banner)
        assert banner.isHidden() and banner.buttons == []


async def test_the_banner_says_what_was_saved_once_add_has_saved(tmp_path: Path, qtbot: QtBot) -> None:
    """Servers › Add… saves the config (the demo servers with the new one): "Nothing is saved until you
    choose" was then untrue."""
    home = client_home(tmp_path, {"weather": fixture("--name", "weather")})
    async with first_run(tmp_path) as ctx:
        banner = FirstRunBanner(ctx, home=home)
        qtbot.addWidget(banner)
        banner.show()
        assert "Nothing is saved until you choose" in banner.message.text()
        gamma = StdioServerConfig("gamma", sys.executable, [str(FIXTURE_SERVER), "--name", "gamma"])
        await ctx.control.put_server(gamma)  # what the server editor's Save does
        assert list(json.loads(ctx.control.path.read_text())["mcpServers"]) == ["notes", "clock", "gamma"]
        await until(lambda: "Nothing is saved" not in banner.message.text())
        text = banner.message.text()
        assert text.startswith("<b>Saved.</b>") and str(ctx.control.path) in text
        assert "the demo servers (notes, clock) are in it too" in text
        assert not ctx.demo
        # Keeping the demo is done already; importing still can be, beside what is there now.
        assert [b.text() for b in banner.buttons] == ["Import 1 server from Claude Desktop", "Close"]
        assert all(b.isVisible() for b in banner.buttons) and not banner.keep.isVisible()
        banner.buttons[0].click()
        await until(lambda: not banner.isVisible())
        await until(lambda: "weather" in json.loads(ctx.control.path.read_text())["mcpServers"])
        assert list(json.loads(ctx.control.path.read_text())["mcpServers"]) == ["notes", "clock", "gamma", "weather"]
        assert not ctx.errors.problems
