"""The README stays a front page: short enough to be read, and opening on the two commands that set
up and run everything (detail belongs in docs/)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MAX_CHARACTERS = 15_000


def test_the_readme_is_at_most_15000_characters() -> None:
    length = len(README.read_text(encoding="utf-8"))
    assert length <= MAX_CHARACTERS, f"README.md has {length:,} characters: move detail to docs/"


def test_the_readme_opens_on_the_run_command_and_the_test_command() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["# mcpmanager", ""]
    assert lines[2] == "```bash"
    block = lines[3 : lines.index("```", 3)]
    assert [line.split()[0] for line in block] == ["./scripts/run.sh", "./scripts/test.sh"]
