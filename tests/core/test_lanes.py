"""The suite's two lanes (tests/helpers/lanes.py): every test is in exactly one, the rooms of real
processes are slow by their path, and the quick lane keeps the unit rooms."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.helpers.lanes import TESTS, in_slow_room, over_budget

ROOT = TESTS.parent
_COUNTS = re.compile(r"^(\d+)/(\d+) tests collected \((\d+) deselected\)", re.MULTILINE)


def test_a_test_file_is_slow_by_its_room() -> None:
    assert in_slow_room(TESTS / "e2e" / "test_serve.py")
    assert in_slow_room(TESTS / "gui" / "test_main_window.py")
    assert in_slow_room(TESTS / "packaging" / "test_app_build.py")
    assert in_slow_room(TESTS / "e2e" / "a_new_folder" / "test_x.py")
    assert not in_slow_room(TESTS / "core" / "supervisor" / "test_lifecycle.py")
    assert not in_slow_room(TESTS / "commands" / "test_search.py")
    assert not in_slow_room(TESTS / "core" / "e2e" / "test_x.py")  # a room is the first folder only
    assert not in_slow_room(TESTS / "test_e2e.py")
    assert not in_slow_room(ROOT / "e2e" / "test_x.py")  # outside tests/


def test_only_the_tests_over_the_budget_are_named_slowest_first() -> None:
    assert over_budget({"a": 0.5, "b": 31.0, "c": 12.0, "d": 10.0}) == [("b", 31.0), ("c", 12.0)]
    assert over_budget({}) == []


def _collection(marks: str) -> subprocess.Popen[str]:
    """A child collecting the node ids `-m marks` selects from the default test paths."""
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", marks],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _collected(child: subprocess.Popen[str]) -> tuple[set[str], int]:
    """The node ids a `_collection` selected, and how many it collected."""
    stdout, stderr = child.communicate(timeout=100)
    assert child.returncode == 0, stdout[-2000:] + stderr[-2000:]
    counts = _COUNTS.search(stdout)
    assert counts, stdout[-2000:]
    selected, collected, deselected = (int(n) for n in counts.groups())
    ids = {line for line in stdout.splitlines() if "::" in line}
    assert len(ids) == selected and selected + deselected == collected
    return ids, collected


# Two collections of the whole suite in child processes (about 10 s each), side by side.
@pytest.mark.slow
def test_every_test_is_in_exactly_one_lane() -> None:
    children = [_collection("slow"), _collection("not slow")]
    try:
        (slow, collected), (quick, collected_again) = (_collected(child) for child in children)
    finally:
        for child in children:  # (one left running when the other failed)
            if child.poll() is None:
                child.kill()
                child.wait()
    assert collected == collected_again
    assert not slow & quick
    assert len(slow) + len(quick) == collected
    # A new room of tests lands in the quick lane until it is named in SLOW_ROOMS or here: decide.
    rooms = {test.split("/")[1] for test in quick}
    assert rooms == {"core", "commands"}, rooms
    assert {test.split("/")[1] for test in slow} >= {"e2e", "gui", "packaging"}
    assert "tests/core/test_lanes.py::test_a_test_file_is_slow_by_its_room" in quick
    assert "tests/core/test_lanes.py::test_every_test_is_in_exactly_one_lane" in slow
    assert any(test.startswith("tests/core/resolve/test_curated_sets.py::") for test in slow)
