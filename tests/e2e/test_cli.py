"""The command line contract: exit codes, one-line errors, a broken config left untouched, `status`."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mcpmanager import __version__
from tests.helpers.clients import serve_client
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config

BROKEN = {
    # name: (config text, what the one stderr line must contain after "<file>:")
    "syntax": (
        '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n',
        ":3:26: invalid JSON: Expecting property name enclosed in double quotes",
    ),
    "wrong-type": (
        '{\n  "mcpServers": {\n    "a": {"command": "x", "args": "x"}\n  }\n}\n',
        ":3:35: mcpServers.a.args: expected an array of strings",
    ),
    "unknown-type": (
        '{\n  "mcpServers": {\n    "a": {"type": "websocket", "url": "ws://localhost:1/"}\n  }\n}\n',
        ":3:19: mcpServers.a.type: unknown server type 'websocket'",
    ),
}


def run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpmanager", *args],
        env={"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("where", ["--config", "default"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_config_exits_2_with_one_line_and_is_left_untouched(
    tmp_path: Path, home: Path, broken: str, where: str
) -> None:
    text, expected = BROKEN[broken]
    if where == "--config":
        path, args = tmp_path / "conf" / "my config.json", ["--config", str(tmp_path / "conf" / "my config.json")]
    else:
        path, args = home / "config.json", []
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode())
    before = files_under(tmp_path)

    result = run(home, "serve", "--stdio", "--mode", "direct", *args)

    assert result.returncode == 2
    assert result.stdout == ""  # stdout is the protocol stream: nothing may leak there
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mcpmanager: {path}{expected}")
    assert files_under(tmp_path) == before  # same bytes, no backup, no temp file, nothing started
    assert not list(tmp_path.rglob("*.bak"))


def test_a_missing_config_file_exits_2(tmp_path: Path, home: Path) -> None:
    missing = tmp_path / "nowhere" / "config.json"
    result = run(home, "serve", "--stdio", "--config", str(missing))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"mcpmanager: config file not found: {missing}"]
    assert not missing.exists() and not missing.parent.exists()  # not created either


def test_status_with_no_engine_exits_1(home: Path) -> None:
    result = run(home, "status")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["no mcpmanager engine is running"]
    as_json = run(home, "status", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == {"engines": []}


def test_a_stale_advertisement_is_not_an_engine(home: Path) -> None:
    # What a killed engine leaves behind: its file names a pid that no longer runs.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    engines = home / "run" / "engines"
    engines.mkdir(parents=True)
    stale = engines / f"{int(dead.stdout)}.json"
    stale.write_text(json.dumps({"pid": int(dead.stdout), "servers": {}}), encoding="utf-8")
    result = run(home, "status")
    assert result.returncode == 1
    assert "no mcpmanager engine is running" in result.stderr
    assert not stale.exists()


async def test_status_lists_every_server_with_its_state_and_reason(tmp_path: Path, home: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "good": fixture("--name", "good"),
            "missing": {"command": "definitely-not-a-command-mcpm"},
            "off": fixture(disabled=True),
            "exits": fixture("--exit-at-start", "3"),
        },
        # A long backoff keeps "exits" in backoff while we look.
        supervisor={**FAST, "backoffInitial": 30, "backoffMax": 60},
    )
    async with serve_client(config, home) as client:

        def states() -> dict[str, str]:
            out = run(home, "status", "--json")
            [engine] = json.loads(out.stdout)["engines"]
            return {name: server["state"] for name, server in engine["servers"].items()}

        wanted = {"good": "ready", "missing": "failed", "off": "disabled", "exits": "backoff"}
        await wait_for(lambda: states() == wanted, timeout=30)
        assert (await client.list_tools()).tools  # the engine serves while we ask about it

        result = run(home, "status")
        assert result.returncode == 0, result.stderr
        head, config_line, *rows, keyring = result.stdout.splitlines()
        assert keyring.startswith("keyring: ")  # the keyring in use, last
        assert re.fullmatch(r"engine pid \d+ \(direct mode\) at stdio", head)
        assert config_line == f"  config {config}; 7 tools"
        parsed = {}
        for row in rows:
            found = re.fullmatch(r"  (\S+)\s+(\S+)\s*(.*)", row)
            assert found, row
            parsed[found.group(1)] = (found.group(2), found.group(3))
        assert set(parsed) == set(wanted)
        assert {name: state for name, (state, _) in parsed.items()} == wanted
        assert parsed["good"][1] == "7 tools"
        assert parsed["missing"][1] == "command not found: definitely-not-a-command-mcpm"
        assert parsed["off"][1] == ""
        assert re.fullmatch(
            r"exited 3( before the handshake finished)? — fatal: cannot start \(config missing\) \(retry in 30 s\)",
            parsed["exits"][1],
        ), parsed["exits"][1]


def test_version(home: Path) -> None:
    result = run(home, "--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mcpmanager {__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", __version__)


def test_a_busy_port_exits_2_with_one_line(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, {})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run(home, "serve", "--http", "--port", str(port), "--mode", "direct", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr == f"mcpmanager: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_demo_server_runs_only_the_bundled_ones(home: Path) -> None:
    result = run(home, "demo-server", "../../etc/passwd")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "mcpmanager: no demo server '../../etc/passwd' (there are: clock_server.py, notes_server.py)\n"
    )
    # A bundled one answers the handshake on stdio (the app runs the demo servers this way).
    handshake = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": handshake})
    answered = run(home, "demo-server", "clock_server.py", stdin=request + "\n")
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "clock"
