"""The fixture server (tests/fixtures/servers/fixture_server.py, written with the SDK) as config
entries, config files on disk, and a user's mcpmanager home with two of them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "servers"


FIXTURE_SERVER = FIXTURES / "fixture_server.py"


def fixture(*flags: str, **extra: Any) -> dict[str, Any]:
    """A config entry that runs the fixture server with these flags."""
    return {"command": sys.executable, "args": [str(FIXTURE_SERVER), *flags], **extra}


def write_config(folder: Path, servers: dict[str, Any], **sections: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps({"mcpServers": servers, **sections}, indent=1), encoding="utf-8")
    return path


FAST = {
    "startTimeout": 10,
    "backoffInitial": 0.2,
    "backoffMax": 1,
    "crashLimit": 3,
    "crashWindow": 30,
    "stopGrace": 1,
}


def engine_home(home: Path) -> Path:
    """A user's mcpmanager home (MCPMANAGER_HOME) with two fixture servers, `a` (its tools can
    change) and `b`, in its config; what `connect` tests and benchmarks start engines on."""
    home.mkdir(parents=True)
    servers = {"a": fixture("--name", "a", "--changing-tools"), "b": fixture("--name", "b")}
    (home / "config.json").write_text(json.dumps({"mcpServers": servers, "supervisor": FAST}), encoding="utf-8")
    return home
