"""The two lanes of the test suite: `slow` (real processes, windows, the app build, and the few unit
tests too costly for an edit-test loop) and the quick lane, its complement (`-m "not slow"`).

A whole room of real processes is slow by its path, so a test added there needs no mark; a slow
test elsewhere carries `@pytest.mark.slow`. A quick-lane test over `BUDGET_S` is named at the end of
the run, so that one that should be marked is seen rather than remembered. The split is measured in
docs/development.md; tests/core/test_lanes.py checks that every test is in exactly one lane.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent

# The rooms whose tests run real engines, servers, windows or builds (seconds each, not milliseconds).
SLOW_ROOMS = ("e2e", "gui", "packaging")

# setup + call + teardown of one quick-lane test, in seconds; a module's shared fixture counts on
# the test that first asks for it. Reported, never failed: a loaded machine would make it flaky.
BUDGET_S = 10.0


def in_slow_room(path: Path) -> bool:
    """Whether a test file sits in one of the `SLOW_ROOMS` of tests/ (at any depth)."""
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return False
    return len(parts) > 1 and parts[0] in SLOW_ROOMS


def over_budget(durations: dict[str, float]) -> list[tuple[str, float]]:
    """The quick-lane tests (node id → seconds) over the budget, slowest first."""
    return sorted(((test, seconds) for test, seconds in durations.items() if seconds > BUDGET_S), key=lambda t: -t[1])
