"""Scoring the resolver on the resolution test set (`resolve_cases`), for the benchmark and the tests.

Names: a resolvable case is auto-resolved correctly, auto-resolved wrongly, or recovered when the
right tool is among the first three suggestions; a must-not case must not be auto-resolved at all.
Arguments: a fixable case is repaired when exactly the expected arguments would be forwarded; a
valid case must be forwarded untouched; a must-refuse case must be refused. An unsafe forward is any
forward of arguments other than the expected ones (a dropped, guessed or converted argument).
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcpmanager.commands.resolve import build_resolver
from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.model import Config
from mcpmanager.core.resolve.resolver import Resolver
from tests.helpers.resolve_cases import ArgumentCase, NameCase, Tool

RECOVER_DEPTH = 3


def resolvers(catalogues: dict[str, list[Tool]]) -> dict[str, tuple[Catalogue, Resolver]]:
    built = {}
    for name, tools in catalogues.items():
        by_server: dict[str, list[Tool]] = defaultdict(list)
        for tool in tools:
            by_server[tool["server"]].append(tool)
        catalogue = Catalogue()
        catalogue.load(by_server)
        catalogue.configure(list(by_server), {})
        built[name] = (catalogue, build_resolver(catalogue, Config()))
    return built


@dataclass
class NameTally:
    resolvable: int = 0
    correct: int = 0
    recovered: int = 0
    wrong: int = 0
    must_not: int = 0
    must_not_wrong: int = 0

    def add(self, other: NameTally) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def figures(self) -> dict[str, Any]:
        def share(n: int) -> float | None:
            return round(n / self.resolvable, 4) if self.resolvable else None

        return {
            **dataclasses.asdict(self),
            "correct_share": share(self.correct),
            "recovered_share": share(self.recovered),
            "wrong_share": share(self.wrong),
        }


@dataclass
class ArgumentTally:
    fixable: int = 0
    repaired: int = 0
    valid: int = 0
    kept: int = 0
    must_refuse: int = 0
    refused: int = 0
    unsafe: int = 0

    def add(self, other: ArgumentTally) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def figures(self) -> dict[str, Any]:
        share = round(self.repaired / self.fixable, 4) if self.fixable else None
        return {**dataclasses.asdict(self), "repaired_share": share}


@dataclass
class Report:
    names: dict[tuple[str, str, str], NameTally] = field(default_factory=lambda: defaultdict(NameTally))
    arguments: dict[tuple[str, str, str], ArgumentTally] = field(default_factory=lambda: defaultdict(ArgumentTally))
    failures: list[dict[str, Any]] = field(default_factory=list)  # wrong resolutions and unsafe forwards
    misses: list[dict[str, Any]] = field(default_factory=list)  # resolvable, not recovered; fixable, not repaired
    timings: list[float] = field(default_factory=list)  # seconds per name resolution that was not exact

    def name_total(self, **where: str) -> NameTally:
        return _total(self.names, NameTally(), where)

    def argument_total(self, **where: str) -> ArgumentTally:
        return _total(self.arguments, ArgumentTally(), where)


_Tally = TypeVar("_Tally", NameTally, ArgumentTally)  # the sum is the same kind of tally as its parts


def _total(table: dict[tuple[str, str, str], _Tally], total: _Tally, where: dict[str, str]) -> _Tally:
    for (catalogue, source, style), tally in table.items():
        keys = {"catalogue": catalogue, "source": source, "style": style}
        if all(keys[k] == v for k, v in where.items()):
            total.add(tally)
    return total


def evaluate(catalogues: dict[str, list[Tool]], names: Iterable[NameCase], arguments: Iterable[ArgumentCase]) -> Report:
    built = resolvers(catalogues)
    report = Report()
    for case in names:
        catalogue, resolver = built[case.catalogue]
        started = time.perf_counter()
        resolution = resolver.resolve(case.tool_name)
        report.timings.append(time.perf_counter() - started)
        tally = report.names[(case.catalogue, case.source, case.style)]
        got = resolution.tool.key if resolution.tool else None
        keys = {t.exposed: t.key for t in catalogue.tools()}
        suggested = [keys[s] for s in resolution.suggestions[:RECOVER_DEPTH] if s in keys]
        record = {"id": case.id, "called": case.tool_name, "expect": case.expect, "got": got, "how": resolution.how}
        if case.expect is None:
            tally.must_not += 1
            if got is not None:
                tally.must_not_wrong += 1
                report.failures.append({**record, "style": case.style})
            continue
        tally.resolvable += 1
        if got == case.expect:
            tally.correct += 1
            tally.recovered += 1
        elif got is not None:
            tally.wrong += 1
            report.failures.append({**record, "style": case.style})
        elif case.expect in suggested:
            tally.recovered += 1
        else:
            report.misses.append({**record, "style": case.style, "suggestions": list(resolution.suggestions)})
    for argument_case in arguments:
        catalogue, resolver = built[argument_case.catalogue]
        server, _, name = argument_case.tool.partition(":")
        tool = catalogue.find(server, name)
        if tool is None:
            raise ValueError(f"{argument_case.id}: no tool {argument_case.tool} in {argument_case.catalogue}")
        if argument_case.params:
            tool = dataclasses.replace(tool, params=argument_case.params)
        checked = resolver.check_arguments(tool, argument_case.arguments)
        _score_arguments(report, argument_case, checked.arguments)
    return report


def _score_arguments(report: Report, case: ArgumentCase, forwarded: dict[str, Any] | None) -> None:
    tally = report.arguments[(case.catalogue, case.source, case.style)]
    record = {"id": case.id, "tool": case.tool, "passed": case.arguments, "expect": case.expect, "got": forwarded}
    if forwarded is not None and forwarded != case.expect:
        tally.unsafe += 1
        report.failures.append({**record, "kind": case.kind})
    if case.kind == "fixable":
        tally.fixable += 1
        if forwarded is not None and forwarded == case.expect:
            tally.repaired += 1
        elif forwarded is None:
            report.misses.append({**record, "kind": case.kind})
    elif case.kind == "valid":
        tally.valid += 1
        tally.kept += forwarded is not None and forwarded == case.expect
    else:
        tally.must_refuse += 1
        tally.refused += forwarded is None
