"""The sample client config trees (tests/fixtures/client_configs/<platform>/, laid out as a user's
home folder) and how tests look at them, for the command-line and the Clients page tests alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mcpmanager.core.config.json_text import clean_jsonc

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "client_configs"


def user_home(tmp_path: Path, sample: str = "linux") -> Path:
    """A copy of one sample tree as the user's home folder."""
    home = tmp_path / "user"
    shutil.copytree(SAMPLES / sample, home)
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def parse(path: Path) -> dict[str, object]:
    value = json.loads(clean_jsonc(path.read_text(encoding="utf-8")))
    assert isinstance(value, dict)
    return value
