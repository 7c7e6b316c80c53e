"""The bundled demo servers (resources/demo), made runnable from anywhere.

The demo config names `python` and scripts relative to its folder; here the interpreter becomes the
one mcpmanager runs on (it has the `mcp` package) and the scripts absolute paths. The notes server
keeps its notes under mcpmanager's own data folder so they survive restarts.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.system.paths import Paths

DEMO_DIR = Path(__file__).resolve().parent.parent / "resources" / "demo"


def demo_config(paths: Paths) -> Config:
    source = DEMO_DIR / "demo_config.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    frozen = bool(getattr(sys, "frozen", False))
    for server in document["mcpServers"].values():
        args = server.get("args", [])
        if server.get("command") == "python":
            server["command"] = sys.executable
            if frozen:  # the app binary is no Python interpreter: it runs its bundled copy itself
                args = ["demo-server", *args]
        server["args"] = [a if frozen or not a.endswith(".py") else str(DEMO_DIR / a) for a in args]
        server.setdefault("env", {})["MCPMANAGER_DEMO_DIR"] = str(paths.cache_dir / "demo")
    return parse_config(json.dumps(document), str(source))


def demo_scripts() -> list[str]:
    return sorted(p.name for p in DEMO_DIR.glob("*_server.py"))


def run_demo_server(script: str) -> None:
    """`mcpmanager demo-server SCRIPT`: one of the bundled demo servers, run by this interpreter
    (in the frozen app, by the app binary, which bundles the SDK the servers need)."""
    if script not in demo_scripts():
        raise ValueError(f"no demo server {script!r} (there are: {', '.join(demo_scripts())})")
    runpy.run_path(str(DEMO_DIR / script), run_name="__main__")
