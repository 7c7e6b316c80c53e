"""The resolution test set over real catalogues (tests/bench/resolve_cases), held to issue 4's bar.

These are outcomes, not timings: the same catalogue and cases give the same figures on any machine.
The safety figures are absolute (not one wrong resolution on a must-not case, not one unsafe
forward); the recall figures have the issue's floors. tests/bench/bench_resolve prints the details.
"""

from __future__ import annotations

import pytest

from tests.helpers.resolve_cases import CATALOGUES, all_cases
from tests.helpers.resolve_eval import Report, evaluate

# Evaluating every case over the real catalogues takes about half a minute (33 s measured under
# load), a quarter of the unit rooms' whole run.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report() -> Report:
    catalogues, names, arguments = all_cases()
    assert set(catalogues) == set(CATALOGUES), "a catalogue of tests/data/catalogues is missing"
    assert sum(len(tools) for tools in catalogues.values()) >= 1000
    return evaluate(catalogues, names, arguments)


@pytest.mark.parametrize("catalogue", CATALOGUES)
def test_names_on_each_real_catalogue(report: Report, catalogue: str) -> None:
    names = report.name_total(catalogue=catalogue)
    assert names.resolvable >= 1000 and names.must_not >= 100
    assert names.must_not_wrong == 0, [f for f in report.failures if f.get("expect") is None]
    assert names.correct >= 0.60 * names.resolvable
    assert names.recovered >= 0.90 * names.resolvable
    assert names.wrong <= 0.02 * names.resolvable


@pytest.mark.parametrize("source", ["generated", "curated"])
def test_names_by_source(report: Report, source: str) -> None:
    names = report.name_total(source=source)
    assert names.resolvable >= 100 and names.must_not >= 50
    assert names.must_not_wrong == 0
    assert names.correct >= 0.60 * names.resolvable
    assert names.recovered >= 0.90 * names.resolvable
    assert names.wrong <= 0.02 * names.resolvable


def test_arguments(report: Report) -> None:
    arguments = report.argument_total()
    assert arguments.unsafe == 0, [f for f in report.failures if "passed" in f]
    assert arguments.fixable >= 300 and arguments.must_refuse >= 300 and arguments.valid >= 100
    assert arguments.repaired >= 0.85 * arguments.fixable
    assert arguments.kept == arguments.valid
    assert arguments.refused == arguments.must_refuse
    curated = report.argument_total(source="curated")
    assert curated.fixable >= 50 and curated.repaired >= 0.85 * curated.fixable
