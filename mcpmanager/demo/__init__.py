"""The bundled demo servers (this package's `*_server.py`, listed in its `demo_config.json`), made
runnable wherever mcpmanager is installed.

The demo config names `python` and scripts relative to this folder; here the interpreter becomes the
one mcpmanager runs on (it has the `mcp` package) and the scripts files on disk. The notes server
keeps its notes under mcpmanager's own data folder so they survive restarts.

The files are package data, found through importlib.resources. A checkout, an installed wheel (pip
always unpacks one) and the frozen app's folder hold them as files, used where they lie; from a
package imported out of a zip a script is extracted to a temporary file kept until the process
ends, since the interpreter that runs a server needs a file.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import runpy
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.model import Config
from mcpmanager.core.system.paths import Paths

DEMO = resources.files(__name__)
_extracted = contextlib.ExitStack()  # the copies out of a zip; nothing to undo for files on disk
atexit.register(_extracted.close)


def on_disk(item: Traversable) -> Path:
    """A path to the file: its own when it is one (as_file then copies nothing), else a copy."""
    return _extracted.enter_context(resources.as_file(item))


def demo_config(paths: Paths) -> Config:
    source = DEMO / "demo_config.json"
    document = json.loads(source.read_text(encoding="utf-8"))
    frozen = bool(getattr(sys, "frozen", False))
    for server in document["mcpServers"].values():
        args = server.get("args", [])
        if server.get("command") == "python":
            server["command"] = sys.executable
            if frozen:  # the app binary is no Python interpreter: it runs its bundled copy itself
                args = ["demo-server", *args]
        server["args"] = [a if frozen or not a.endswith(".py") else str(on_disk(DEMO / a)) for a in args]
        server.setdefault("env", {})["MCPMANAGER_DEMO_DIR"] = str(paths.cache_dir / "demo")
    return parse_config(json.dumps(document), str(source))


def demo_scripts() -> list[str]:
    return sorted(item.name for item in DEMO.iterdir() if item.name.endswith("_server.py"))


def run_demo_server(script: str) -> None:
    """`mcpmanager demo-server SCRIPT`: one of the bundled demo servers, run by this interpreter
    (in the frozen app, by the app binary, which bundles the SDK the servers need)."""
    if script not in demo_scripts():
        raise ValueError(f"no demo server {script!r} (there are: {', '.join(demo_scripts())})")
    runpy.run_path(str(on_disk(DEMO / script)), run_name="__main__")
