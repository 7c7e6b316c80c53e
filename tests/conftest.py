from __future__ import annotations

from pathlib import Path

import keyring
import pytest

from tests.helpers.lanes import BUDGET_S, in_slow_room, over_budget
from tests.helpers.vaults import keyring_env


@pytest.fixture(autouse=True)
def private_keyring(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets a keyring of its own (a real file backend), never the user's: in this process
    and in any child that inherits the environment (children given an explicit env take
    `keyring_env` from `tests.helpers.vaults`)."""
    folder = tmp_path_factory.mktemp("keyring")
    for name, value in keyring_env(folder).items():
        monkeypatch.setenv(name, value)
    keyring.set_keyring(keyring.core.load_keyring(keyring_env(folder)["PYTHON_KEYRING_BACKEND"]))
    return folder


# tryfirst: the marks must be on before pytest's own hook deselects by `-m`.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow rooms' tests join the slow lane by their path (tests/helpers/lanes.py)."""
    for item in items:
        if in_slow_room(item.path):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the quick-lane tests that took longer than the lane's budget: they belong in the slow one."""
    durations: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport) and "slow" not in report.keywords:
                durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration
    slow = over_budget(durations)
    if slow:
        terminalreporter.section(f"quick-lane tests over {BUDGET_S:g} s: mark them @pytest.mark.slow")
        for test, seconds in slow:
            terminalreporter.line(f"{seconds:6.1f} s  {test}")
