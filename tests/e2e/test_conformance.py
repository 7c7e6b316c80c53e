"""The official MCP conformance suite against mcpmanager: what passes directly passes through it.

The suite (its server scenarios, `--suite all`) runs first against the conformance fixture served
directly over HTTP, then against `mcpmanager serve --http` with that fixture as its one stdio
server, once with the downstream speaking 2026-07-28 and once with it limited to the handshake era
(the suite itself speaks the handshake era, so both pairings of eras are crossed). Direct mode must
give every check the status it had directly (where mcpmanager answers with JSON rather than SSE, the
suite's own not-applicable checks stand in for those reading an SSE answer: `SSE_ONLY`); discovery
mode may fail only checks that look for a tool in tools/list that discovery does not list.
"""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from tests.e2e.test_http import unused_port
from tests.helpers.clients import http_client
from tests.helpers.conformance import Check, conformance_fixture, fixture_over_http, install_conformance, run_suite
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.serving import serving_http

MISSING_TOOL = re.compile(r"Tool '([^']+)' not found")
# mcpmanager answers a request with JSON unless it needs a stream (`serve/json_first.py`), which the
# spec allows; the suite then runs its own not-applicable checks in place of those that read an SSE
# answer (SEP-1699: "Server returned JSON instead of SSE stream"). Only these may differ.
SSE_ONLY = {
    ("server-sse-polling", check)
    for check in (
        "incoming-sse-event",
        "server-sse-disconnect-resume",
        "server-sse-priming-event",
        "server-sse-retry-field",
        "stream-closed",
    )
}
JSON_ANSWERED = {
    ("server-sse-polling", "server-sse-content-type"): "INFO",  # replaces SSE_ONLY
    ("server-sse-multiple-streams", "server-sse-streams-functional"): "INFO",  # "SSE streams optional"
}


@pytest.fixture(scope="module")
def suite() -> None:
    install_conformance()


@pytest.fixture(scope="module")
def direct_checks(suite: None, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Check]:
    """The suite against the fixture itself, once for the module (a loop of its own: module scope)."""
    folder = tmp_path_factory.mktemp("direct")

    async def run() -> dict[tuple[str, str], Check]:
        async with fixture_over_http(unused_port(), folder / "fixture.log") as url:
            return await run_suite(url, folder / "results")

    return anyio.run(run)


def summary(checks: dict[tuple[str, str], Check]) -> str:
    passed = sum(c.status == "SUCCESS" for c in checks.values())
    scenarios = {c.scenario for c in checks.values()}
    clean = {s for s in scenarios if not any(c.status == "FAILURE" for c in checks.values() if c.scenario == s)}
    return f"{len(clean)}/{len(scenarios)} scenarios, {passed}/{len(checks)} checks passed"


@pytest.mark.parametrize("downstream", ["both eras", "handshake only"])
async def test_every_check_that_passes_directly_passes_through_mcpmanager(
    direct_checks: dict[tuple[str, str], Check], tmp_path: Path, downstream: str
) -> None:
    flags = ["--handshake-only"] if downstream == "handshake only" else []
    config = write_config(tmp_path / "cfg", {"conformance": conformance_fixture(*flags)}, supervisor=FAST)
    async with serving_http(config, tmp_path / "home", mode="direct") as served:
        through = await run_suite(f"{served.url}/direct", tmp_path / "direct", served.token)
        discovery = await run_suite(f"{served.url}/discovery", tmp_path / "discovery", served.token)
        async with http_client(f"{served.url}/direct", served.token) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
        async with http_client(f"{served.url}/discovery", served.token) as client:
            in_discovery = {t.name for t in (await client.list_tools()).tools}
    print(f"\nconformance, {downstream}: direct {summary(direct_checks)}; through mcpmanager {summary(through)}")
    print(f"conformance, {downstream}: discovery mode {summary(discovery)}")

    assert sum(c.status == "SUCCESS" for c in direct_checks.values()) >= 40, "the fixture itself regressed"
    assert direct_checks.keys() >= SSE_ONLY, "the fixture no longer answers with SSE: the exception is stale"
    assert through.keys() == (direct_checks.keys() - SSE_ONLY) | JSON_ANSWERED.keys()
    assert {key: through[key].status for key in JSON_ANSWERED} == JSON_ANSWERED
    assert all(direct_checks[key].status != "FAILURE" for key in SSE_ONLY)  # nothing failing was hidden
    differing = {
        key: (direct_checks[key].status, c.status, c.error)
        for key, c in through.items()
        if key not in JSON_ANSWERED and c.status != direct_checks[key].status
    }
    assert not differing, differing

    # Discovery lists the meta-tools, not the catalogue: a check may fail only for want of a tool that
    # direct mode lists and discovery does not.
    failures = [c for c in discovery.values() if c.status == "FAILURE"]
    for failure in failures:
        missing = MISSING_TOOL.search(failure.error)
        assert missing, failure
        assert missing.group(1) in listed and missing.group(1) not in in_discovery, failure
    others = {key: c.status for key, c in discovery.items() if c.status != "FAILURE" and key not in JSON_ANSWERED}
    assert all(status == direct_checks[key].status for key, status in others.items())
    # Every scenario ran (a failed check may end its scenario early, so only scenarios are compared).
    assert {c.scenario for c in discovery.values()} == {c.scenario for c in direct_checks.values()}
