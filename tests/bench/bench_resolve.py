"""Resolution benchmark (figures, not pass/fail): wrong tool and argument names over real catalogues.

    .venv/bin/python -m tests.bench.bench_resolve [--json] [--failures] [--misses N] [--dev [--half H]]
        [--simulate [--list]]

Prints, per catalogue and per source (generated / curated), then per style: correct
auto-resolutions, recovered (auto, or the right tool among the first 3 suggestions), wrong
auto-resolutions on resolvable and on must-not cases; correct argument repairs, valid calls kept,
refusals, and unsafe forwards (an argument dropped, guessed or converted). Also the time a
non-exact resolution takes (p50/p95), on the real catalogues and on catalogues of 2,000 and 20,000
tools (the real ones replicated under other server names): building the name index (once per
catalogue change, on the first name that is not exact) and resolving a wrong name.

`--dev` measures the development set for generalisation instead (`tests/data/resolve/dev_generalise_*`,
on a catalogue of Azure MCP and BFCL service tools), each half apart: `tune`, which rules were
adjusted on, and `heldout`, which was only measured.

`--simulate` runs the cross-parameter simulation instead (`tests/helpers/resolve_simulate.py`): each
tool of the real catalogues is passed every parameter name another tool of its server declares and
it does not, and every rename made then is counted per tier; the `described` ones are judged by
`tests/data/resolve/simulation_labels.json` (same meaning, or doubtful). `--list` lists them.

Targets (issue 4): ≥ 60 % of resolvable names auto-resolved correctly, ≥ 90 % recovered, no wrong
auto-resolution on must-not cases and ≤ 2 % on resolvable ones; ≥ 85 % of fixable argument errors
repaired, no unsafe forward.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.resolve.names import NameResolver
from tests.helpers.resolve_cases import NameCase, Tool, all_cases
from tests.helpers.resolve_dev import SOURCES, dev_cases
from tests.helpers.resolve_eval import Report, evaluate
from tests.helpers.resolve_simulate import (
    counts,
    described_summary,
    doubtful_labels,
    judged,
    simulate,
    simulation_catalogues,
)

SIZES = (2_000, 20_000)
SAMPLE = 300  # wrong names timed per size
_NAME_HEADER = (
    "| names | resolvable | auto-resolved correctly | recovered (auto or top 3) | wrong auto | must-not "
    + "| wrong auto on must-not |"
)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _name_row(label: str, figures: dict[str, Any]) -> str:
    return (
        f"| {label} | {figures['resolvable']} | {_percent(figures['correct_share'])} | "
        f"{_percent(figures['recovered_share'])} | {figures['wrong']} ({_percent(figures['wrong_share'])}) | "
        f"{figures['must_not']} | {figures['must_not_wrong']} |"
    )


def _argument_row(label: str, figures: dict[str, Any]) -> str:
    return (
        f"| {label} | {figures['fixable']} | {_percent(figures['repaired_share'])} | "
        f"{figures['kept']}/{figures['valid']} | {figures['refused']}/{figures['must_refuse']} | {figures['unsafe']} |"
    )


def summary(report: Report) -> dict[str, Any]:
    catalogues = sorted({c for c, _, _ in report.names} | {c for c, _, _ in report.arguments})
    sources = ("generated", "curated")
    name_styles = sorted({s for _, _, s in report.names})
    argument_styles = sorted({s for _, _, s in report.arguments})
    timings = sorted(report.timings)
    return {
        "names": {
            "all": report.name_total().figures(),
            "by_catalogue": {c: report.name_total(catalogue=c).figures() for c in catalogues},
            "by_source": {s: report.name_total(source=s).figures() for s in sources},
            "by_catalogue_source": {
                f"{c}/{s}": report.name_total(catalogue=c, source=s).figures() for c in catalogues for s in sources
            },
            "by_style": {s: report.name_total(style=s).figures() for s in name_styles},
        },
        "arguments": {
            "all": report.argument_total().figures(),
            "by_catalogue": {c: report.argument_total(catalogue=c).figures() for c in catalogues},
            "by_source": {s: report.argument_total(source=s).figures() for s in sources},
            "by_style": {s: report.argument_total(style=s).figures() for s in argument_styles},
        },
        "resolve_ms": {
            "p50": round(1000 * statistics.median(timings), 3) if timings else None,
            "p95": round(1000 * timings[int(0.95 * (len(timings) - 1))], 3) if timings else None,
            "max": round(1000 * timings[-1], 3) if timings else None,
        },
        "failures": report.failures,
    }


def _ms(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[int(share * (len(ordered) - 1))], 3)


def scaling(tools: list[Tool], cases: list[NameCase]) -> list[dict[str, Any]]:
    """Index build and wrong-name latency on the real tools replicated up to each size."""
    called = [c.tool_name for c in cases][:SAMPLE]
    rows = []
    for size in SIZES:
        by_server: dict[str, list[Tool]] = {}
        for index in range(size):
            tool = tools[index % len(tools)]
            server = f"{tool['server']}-{index // len(tools)}"
            by_server.setdefault(server, []).append({**tool, "server": server})
        catalogue = Catalogue()
        catalogue.load(by_server)
        catalogue.configure(list(by_server), {})
        started = time.perf_counter()
        names = NameResolver(catalogue.tools())
        build = time.perf_counter() - started
        timings = []
        for name in called:
            started = time.perf_counter()
            names.resolve(name)
            timings.append(time.perf_counter() - started)
        rows.append(
            {
                "tools": size,
                "build_ms": round(1000 * build, 1),
                "p50_ms": _ms(timings, 0.5),
                "p95_ms": _ms(timings, 0.95),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--failures", action="store_true", help="list wrong resolutions and unsafe forwards")
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="list N cases not recovered / repaired")
    parser.add_argument("--dev", action="store_true", help="measure the development set, each half apart")
    parser.add_argument("--half", choices=SOURCES, help="with --dev: list failures and misses of this set's half only")
    parser.add_argument("--simulate", action="store_true", help="run the cross-parameter simulation")
    parser.add_argument("--list", action="store_true", help="with --simulate: list the described renames")
    args = parser.parse_args(argv)
    if args.simulate:
        return _simulate(args)
    if args.dev:
        return _dev(args)
    catalogues, names, arguments = all_cases()
    report = evaluate(catalogues, names, arguments)
    figures = summary(report)
    real = [tool for tools in catalogues.values() for tool in tools]
    wrong = [
        c
        for c in names
        if c.source == "generated" and c.style in ("typo", "verb-synonym", "missing-word", "other-action")
    ]
    figures["scaling"] = scaling(real, wrong)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    tools = {name: len(tools) for name, tools in catalogues.items()}
    print(f"catalogues: {tools}; {len(names)} name cases, {len(arguments)} argument cases\n")
    print(
        "| names | resolvable | auto-resolved correctly | recovered (auto or top 3) | wrong auto | must-not "
        "| wrong auto on must-not |"
    )
    print("|---|---|---|---|---|---|---|")
    print(_name_row("all", figures["names"]["all"]))
    for group in ("by_catalogue_source", "by_style"):
        for label, row in figures["names"][group].items():
            if row["resolvable"] or row["must_not"]:
                print(_name_row(label, row))
    print("\n| arguments | fixable | repaired | valid kept | must-refuse refused | unsafe forwards |")
    print("|---|---|---|---|---|---|")
    print(_argument_row("all", figures["arguments"]["all"]))
    for group in ("by_catalogue", "by_source", "by_style"):
        for label, row in figures["arguments"][group].items():
            print(_argument_row(label, row))
    timing = figures["resolve_ms"]
    print(f"\nnon-exact resolution: p50 {timing['p50']} ms, p95 {timing['p95']} ms, max {timing['max']} ms")
    print("\n| tools | name index build | wrong name p50 | wrong name p95 |\n|---|---|---|---|")
    for row in figures["scaling"]:
        print(f"| {row['tools']:,} | {row['build_ms']} ms | {row['p50_ms']} ms | {row['p95_ms']} ms |")
    _print_cases(report, args)
    return 0


def _print_cases(report: Report, args: argparse.Namespace) -> None:
    """The failures and the first misses, when asked for (`--failures`, `--misses N`)."""
    if args.failures:
        print(f"\n{len(report.failures)} failures:")
        for failure in report.failures:
            print(" ", json.dumps(failure, ensure_ascii=False))
    if args.misses:
        print(f"\n{len(report.misses)} misses (first {args.misses}):")
        for miss in report.misses[: args.misses]:
            print(" ", json.dumps(miss, ensure_ascii=False))


def _dev(args: argparse.Namespace) -> int:
    catalogues, names, arguments = dev_cases()
    if args.half:
        names = [c for c in names if c.source == args.half]
        arguments = [c for c in arguments if c.source == args.half]
    report = evaluate(catalogues, names, arguments)
    figures: dict[str, Any] = {
        "names": {h: report.name_total(source=h).figures() for h in SOURCES},
        "arguments": {h: report.argument_total(source=h).figures() for h in SOURCES},
        "failures": report.failures,
        "misses": report.misses,
    }
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(f"development set: {len(names)} name cases, {len(arguments)} argument cases\n")
    print(_NAME_HEADER)
    print("|---|---|---|---|---|---|---|")
    for half in SOURCES:
        print(_name_row(half, figures["names"][half]))
    print("\n| arguments | fixable | repaired | valid kept | must-refuse refused | unsafe forwards |")
    print("|---|---|---|---|---|---|")
    for half in SOURCES:
        print(_argument_row(half, figures["arguments"][half]))
    _print_cases(report, args)
    return 0


def _simulate(args: argparse.Namespace) -> int:
    catalogues = simulation_catalogues()
    renames = simulate(catalogues)
    figures = {"catalogues": {n: len(t) for n, t in catalogues.items()}, "renames": counts(renames)}
    figures["described"] = described_summary(renames)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(f"catalogues: {figures['catalogues']}\n")
    print("| renames | passed alone | forwarded | beside the required | forwarded |\n|---|---|---|---|---|")
    for row, cells in figures["renames"].items():
        print(
            f"| {row} | {cells.get('alone', 0)} | {cells.get('alone forwarded', 0)} | "
            f"{cells.get('beside-required', 0)} | {cells.get('beside-required forwarded', 0)} |"
        )
    print(f"\ndescribed: {figures['described']}")
    if args.list:
        doubtful = doubtful_labels()
        for rename in renames:
            if rename.how == "described":
                mark = "doubtful" if judged(rename, doubtful) else "same"
                sent = "forwarded" if rename.forwarded else "refused"
                print(f"  {mark:8} {sent:9} {rename.call:15} {rename.key()}  | {rename.declared_description[:80]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
