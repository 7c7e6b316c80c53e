"""What the tests of each client's sample file (tests/data/clients) share: a home folder holding it,
the files under a folder, a JSON(C) file's value, an import applied, the text an edit inserted."""

from __future__ import annotations

import difflib
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from mcpmanager.core.clients.importing import ImportPlan
from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.engine.control import Control

DATA = Path(__file__).resolve().parents[2] / "data" / "clients"
PLATFORMS = ["linux", "darwin", "win32"]
COMMAND = ["/opt/mcpmanager/bin/mcpmanager"]


def home_with(tmp_path: Path, *samples: tuple[Path, str]) -> Path:
    """A home folder with each sample file copied to where it stands (relative to the home folder)."""
    home = tmp_path / "home"
    for sample, relative in samples:
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, home / relative)
    home.mkdir(exist_ok=True)
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def parse(data: bytes) -> dict[str, Any]:
    value = json.loads(clean_jsonc(data.decode("utf-8")))
    assert isinstance(value, dict)
    return value


def apply_import(plan: ImportPlan, config: Path) -> ImportPlan:
    added, skipped = anyio.run(Control(config).import_servers, plan.candidates)
    return replace(plan, added=added, skipped=skipped)


def inserted_only(before: str, after: str) -> str:
    """The text install put in, after checking that every character of `before` is still in `after`,
    in order and unchanged (nothing replaced, nothing deleted)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (tag, before[i1:i2], after[j1:j2])
        if tag == "insert":
            added.append(after[j1:j2])
    return "".join(added)
