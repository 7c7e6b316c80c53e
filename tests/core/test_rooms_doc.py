"""The core's rooms are listed once, in docs/architecture.md's table (docs/development.md links to
it): every package under mcpmanager/core has its row there, every row is a package, and no other
page lists them again."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "mcpmanager" / "core"


def listed(text: str) -> list[str]:
    return re.findall(r"^\| `core/(\w+)/` \|", text, re.MULTILINE)


def test_the_rooms_table_names_every_core_package_once() -> None:
    rooms = listed((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    packages = {path.parent.name for path in CORE.glob("*/__init__.py")}
    assert len(rooms) == len(set(rooms)), rooms
    assert set(rooms) == packages


def rooms_named(text: str) -> set[str]:
    """The rooms a page names as folders (`system/`, `core/system/`)."""
    packages = {path.parent.name for path in CORE.glob("*/__init__.py")}
    return set(re.findall(r"`(?:core/)?(\w+)/`", text)) & packages


def test_no_other_page_lists_the_rooms_again() -> None:
    # A page may point at a room or two; one that names five or more as folders is a second list.
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if page.name != "architecture.md":
            named = rooms_named(page.read_text(encoding="utf-8"))
            assert len(named) < 5, f"{page.name} lists the rooms again ({', '.join(sorted(named))})"
