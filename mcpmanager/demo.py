"""The bundled demo servers (resources/demo), made runnable from anywhere.

The demo config names `python` and scripts relative to its folder; here the interpreter becomes the
one mcpmanager runs on (it has the `mcp` package) and the scripts absolute paths. The notes server
keeps its notes under mcpmanager's own data folder so they survive restarts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcpmanager.core.config import Config, parse_config
from mcpmanager.core.paths import Paths

DEMO_DIR = Path(__file__).resolve().parent.parent / "resources" / "demo"


def demo_config(paths: Paths) -> Config:
    source = DEMO_DIR / "demo_config.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    for server in document["mcpServers"].values():
        if server.get("command") == "python":
            server["command"] = sys.executable
        server["args"] = [str(DEMO_DIR / a) if a.endswith(".py") else a for a in server.get("args", [])]
        server.setdefault("env", {})["MCPMANAGER_DEMO_DIR"] = str(paths.cache_dir / "demo")
    return parse_config(json.dumps(document), str(source))
