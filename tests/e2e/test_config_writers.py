"""Two programs of ours writing the config at once lose nothing (issue 34, item 2): four `mcpmanager
import` subprocesses, a `mcpmanager secrets move` subprocess and the window's edit (`Control`, in
this process) against one config file, made to race for certain (`tests/helpers/racing_writer.py`:
every writer reads the same file before any saves). At the end every server each of them added is
in the file, and the moved secret is a keyring reference, not the plain text back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpmanager.core.config import load
from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.engine.control import Control
from mcpmanager.core.vault.store import Vault
from tests.helpers import racing_writer
from tests.helpers.vaults import current_keyring_env

IMPORTS = 4
WRITERS = IMPORTS + 2  # the imports, `secrets move`, the window's edit
TOKEN = "token-in-the-config-5d31"
ROOT = Path(__file__).resolve().parents[2]
RUN = "import tests.helpers.racing_writer as r; r.main()"


def _racing(barrier: Path, manager: Path, user: Path, *args: str) -> subprocess.Popen[str]:
    env = {"HOME": str(user), "MCPMANAGER_HOME": str(manager), "PATH": os.environ.get("PATH", "")}
    return subprocess.Popen(
        [sys.executable, "-c", RUN, str(barrier), str(WRITERS), "--", *args],
        cwd=ROOT,
        env={**env, **current_keyring_env()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _cursor_home(folder: Path, name: str) -> Path:
    """A user's home whose Cursor config has one server, `name`, of its own."""
    (folder / ".cursor").mkdir(parents=True)
    entry = {"command": "echo-server", "args": [name]}
    (folder / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}), encoding="utf-8")
    return folder


def test_concurrent_writers_keep_every_server_and_the_moved_secret(tmp_path: Path) -> None:
    manager, barrier = tmp_path / "manager", tmp_path / "barrier"
    manager.mkdir()
    config = manager / "config.json"
    first = {"acme": {"command": "acme-server", "env": {"ACME_TOKEN": TOKEN}}, "kept": {"command": "kept-server"}}
    config.write_text(json.dumps({"mcpServers": first, "myOwnKey": 1}, indent=1), encoding="utf-8")
    names = [f"imported-{n}" for n in range(IMPORTS)]
    running = [
        _racing(
            barrier, manager, _cursor_home(tmp_path / name, name), "import", "--from", "cursor", "--config", str(config)
        )
        for name in names
    ]
    running.append(_racing(barrier, manager, tmp_path, "secrets", "--config", str(config), "move", "acme"))

    try:
        # The window: it has the config loaded (its first read, at the barrier), then saves a server.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(load, "parse_config", racing_writer.racing(barrier, WRITERS))
            load_config(config)
            anyio.run(Control(config).put_server, StdioServerConfig(name="from-window", command="window-server"))
        done = [(process, *process.communicate(timeout=60)) for process in running]
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()
            process.communicate()
    for (process, out, err), name in zip(done, [*names, "secrets move"], strict=True):
        assert process.returncode == 0, f"{name}: {err}"
        if name != "secrets move":
            assert f"+ {name}" in out + err, out + err
    on_disk = load_config(config)
    missing = sorted({*names, "from-window", "acme", "kept"} - set(on_disk.servers))
    assert missing == [], f"lost by a concurrent writer: {missing}"
    acme = on_disk.servers["acme"]
    assert isinstance(acme, StdioServerConfig)
    assert acme.env == {"ACME_TOKEN": "${keyring:acme/ACME_TOKEN}"}
    assert TOKEN not in config.read_text(encoding="utf-8") and Vault().get("acme/ACME_TOKEN") == TOKEN
    assert json.loads(config.read_text(encoding="utf-8"))["myOwnKey"] == 1
