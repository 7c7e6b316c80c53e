"""The official MCP conformance suite against mcpmanager: what passes directly passes through it.

The suite (0.2.0-alpha.12) runs each of its two requirement sets (`--requirements 2025-11-25`, the
handshake-era scenarios at that wire; `--requirements 2026-07-28`, the per-request-`_meta`
scenarios, with the unscored tasks extension and pending scenarios it also runs) first against the
conformance fixture served directly over HTTP, then against `mcpmanager serve --http` with that
fixture as its one stdio server, once with the downstream speaking 2026-07-28 and once limited to
the handshake era. One test per (set, downstream).

- Directly, every check is SUCCESS but `DIRECT_NOT_SUCCESS`: the suite's own INFO entries (traces
  of what it sent and got, and its note that a JSON answer makes SSE optional) and a scenario the
  suite always skips.
- Direct mode must give every check the status it had directly. Where mcpmanager answers a
  handshake-era request with JSON rather than SSE (the spec allows either), the suite runs its own
  not-applicable checks in place of those that read an SSE answer (`SSE_ONLY`, `JSON_ANSWERED`).
- Discovery mode lists its meta-tools instead of the catalogue, but forwards a call to a catalogue
  tool by name; so it may fail only a check whose verdict rests on what tools/list holds: a tool
  the suite looks up by name in the list ("Tool 'X' not found") or by an annotation in the list
  (SEP-2243's "no tool with x-mcp-header annotations"), and only when direct mode lists that tool
  and discovery does not; and it may miss the news of a server's changed tool list (stateless's
  SHOULD) while it lists none of the server's tools, since then its own list did not change. A
  check that names listing while calling a tool by name ("does not list the diagnostic tool 'X'")
  is not excused: the suite says so only when the call itself went wrong, and a forwarded call
  should go as it does directly. Every other check has its direct status.
- Two kinds of difference are named rather than compared, each with its reason:
  - `BY_DESIGN`: where mcpmanager answers otherwise on purpose; each must still occur as named, so
    the list cannot outlive what it names. A client that did not declare tasks
    calling a tool that requires one gets the task's result from mcpmanager, which runs the task
    for it (docs/protocol.md, "Tasks"), where the fixture answers -32021.
  - `MODERN_SERVER_ONLY`, with the handshake-only downstream at 2026-07-28: what only a 2026-07-28
    server can give the suite.
    - `input-required-result-*`: the fixture's handshake-era copy asks these questions with requests
      of its own during the call (`conformance_asking.py`), which mcpmanager turns into
      InputRequiredResults; but a handshake-era server's request has no key, so the client sees
      mcpmanager's `q0`, ... where the suite looks for the server's (`user_name`), and a round the
      suite leaves unanswered (it stops at a failed check, or never retries on purpose) stays
      parked for mcpmanager's 10 minutes, during which every later question of that stdio server is
      refused as belonging to one of several clients in flight (docs/protocol.md, "Requests from
      servers to clients"): one abandoned round fails every scenario after it. Run one scenario
      per mcpmanager, all but two pass as they do directly: `basic-elicitation` (the key) and
      `ignore-extra-params` (a SHOULD, WARNING: its first call already carries the answer under the
      server's key `user_name`, which a handshake-era server never asked for, so mcpmanager asks).
    - `tasks-*`: the fixture's tasks are the 2026-07-28 extension's shapes (`conformance_tasks.py`);
      its handshake-era copy has no 2025-11-25 tasks utility for mcpmanager to translate.
    - two `server-stateless` checks: a handshake-era server learns a client's capabilities once, at
      its handshake with mcpmanager, so it cannot refuse one request for what that request's
      client did not declare.
    How mcpmanager carries a handshake-era server's questions to a 2026-07-28 client is tested in
    tests/e2e/test_rounds_as_written.py, test_client_requests.py and tests/core/proxy/test_rounds.py;
    its tasks in test_tasks.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp_types import Tool

from tests.e2e.test_http import unused_port
from tests.helpers.clients import http_client
from tests.helpers.conformance import (
    REQUIREMENT_SETS,
    Check,
    conformance_fixture,
    fixture_over_http,
    install_conformance,
    run_suite,
)
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.serving import serving_http

Checks = dict[tuple[str, str], Check]

# Two suite runs a test (direct and discovery mode), each 10-40 s with mcpmanager in front.
pytestmark = pytest.mark.timeout(240, func_only=True)

MISSING_TOOL = re.compile(r"Tool '([^']+)' not found")
NO_HEADER_TOOL = "server exposes no tool with x-mcp-header annotations"
TOOLS_UNCHANGED = "no notifications/tools/list_changed arrived"

# Directly, the checks that are not SUCCESS, with their status and why.
DIRECT_NOT_SUCCESS: dict[str, dict[tuple[str, str], str]] = {
    "2025-11-25": {
        # Traces, not verdicts: what the suite sent and received while testing SSE resumption.
        ("server-sse-polling", "outgoing-request"): "INFO",
        ("server-sse-polling", "incoming-response"): "INFO",
        ("server-sse-polling", "incoming-sse-event"): "INFO",
        ("server-sse-polling", "stream-closed"): "INFO",
    },
    "2026-07-28": {
        # The SDK's 2026-07-28 HTTP answers with JSON unless a handler streams; "SSE streams optional".
        ("server-sse-multiple-streams", "server-sse-streams-functional"): "INFO",
        # The suite skips it for everyone: its harness still watches the old channel (its words).
        ("tasks-status-notifications", "tasks-status-notifications"): "SKIPPED",
    },
}
# mcpmanager answers a request with JSON unless it needs a stream (`serve/json_first.py`), which the
# spec allows; the suite then runs its own not-applicable checks in place of those that read an SSE
# answer (SEP-1699: "Server returned JSON instead of SSE stream"). Only these may differ.
SSE_ONLY: dict[str, set[tuple[str, str]]] = {
    "2025-11-25": {
        ("server-sse-polling", check)
        for check in (
            "incoming-sse-event",
            "server-sse-disconnect-resume",
            "server-sse-priming-event",
            "server-sse-retry-field",
            "stream-closed",
        )
    },
    "2026-07-28": set(),
}
JSON_ANSWERED: dict[str, dict[tuple[str, str], str]] = {
    "2025-11-25": {
        ("server-sse-polling", "server-sse-content-type"): "INFO",  # replaces SSE_ONLY
        ("server-sse-multiple-streams", "server-sse-streams-functional"): "INFO",  # "SSE streams optional"
    },
    "2026-07-28": {},
}


# Through mcpmanager, on purpose (see the module's docstring): (scenario, check) → its status there,
# or None where the check is not reported there.
BY_DESIGN: dict[str, dict[tuple[str, str], str | None]] = {
    "2025-11-25": {},
    "2026-07-28": {
        ("tasks-required-task-error", "sep-2663-server-returns-missing-capability-when-required"): "FAILURE",
        ("tasks-required-task-error", "sep-2663-server-returns-missing-capability-data-shape"): None,
    },
}
# With the handshake-only downstream: scenarios (by prefix) and checks only a 2026-07-28 server serves.
MODERN_SERVER_ONLY: dict[str, tuple[tuple[str, ...], set[tuple[str, str]]]] = {
    "2025-11-25": ((), set()),
    "2026-07-28": (
        ("input-required-result-", "tasks-"),
        {
            ("server-stateless", "sep-2575-server-rejects-undeclared-capability"),
            ("server-stateless", "sep-2575-missing-capability-http-400"),
        },
    ),
}


def named(requirements: str, downstream: str, key: tuple[str, str]) -> bool:
    """Whether `key` is a difference named above for this run."""
    prefixes, checks = MODERN_SERVER_ONLY[requirements] if downstream == "handshake only" else ((), set())
    return key in BY_DESIGN[requirements] or key in checks or key[0].startswith(prefixes)


@pytest.fixture(scope="module")
def suite() -> None:
    install_conformance()


@pytest.fixture(scope="module")
def direct_checks(suite: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Checks]:
    """Both sets against the fixture itself, once for the module (a loop of its own: module scope)."""
    folder = tmp_path_factory.mktemp("direct")

    async def run() -> dict[str, Checks]:
        async with fixture_over_http(unused_port(), folder / "fixture.log") as url:
            return {s: await run_suite(url, folder / s, s) for s in REQUIREMENT_SETS}

    return anyio.run(run)


def summary(checks: Checks) -> str:
    passed = sum(c.status == "SUCCESS" for c in checks.values())
    scenarios = {c.scenario for c in checks.values()}
    clean = {s for s in scenarios if not any(c.status == "FAILURE" for c in checks.values() if c.scenario == s)}
    return f"{len(clean)}/{len(scenarios)} scenarios, {passed}/{len(checks)} checks passed"


def header_tools(tools: list[Tool]) -> set[str]:
    """Tools with an argument mirrored in an `Mcp-Param-*` header (SEP-2243)."""
    return {
        t.name
        for t in tools
        if any(isinstance(p, dict) and "x-mcp-header" in p for p in t.input_schema.get("properties", {}).values())
    }


def for_want_of_listing(failure: Check, listed: list[Tool], in_discovery: list[Tool]) -> bool:
    """True if `failure` comes only from a tool direct mode lists and discovery does not."""
    names, hidden = {t.name for t in listed}, {t.name for t in in_discovery}
    if missing := MISSING_TOOL.search(failure.error):
        return missing.group(1) in names - hidden
    if NO_HEADER_TOOL in failure.error:
        return bool(header_tools(listed)) and not header_tools(in_discovery)
    if TOOLS_UNCHANGED in failure.error:  # a server's new tool changes discovery's list only if it lists the server's
        return not names & hidden
    return False


@pytest.mark.parametrize("requirements", REQUIREMENT_SETS)
def test_the_fixture_passes_every_scenario_directly(direct_checks: dict[str, Checks], requirements: str) -> None:
    checks = direct_checks[requirements]
    print(f"\nconformance {requirements}, directly: {summary(checks)}")
    not_success = {key: c.status for key, c in checks.items() if c.status != "SUCCESS"}
    assert not_success == DIRECT_NOT_SUCCESS[requirements], {
        key: (c.status, c.error) for key, c in checks.items() if key in not_success
    }


@pytest.mark.parametrize("downstream", ["both eras", "handshake only"])
@pytest.mark.parametrize("requirements", REQUIREMENT_SETS)
async def test_every_check_that_passes_directly_passes_through_mcpmanager(
    direct_checks: dict[str, Checks], tmp_path: Path, requirements: str, downstream: str
) -> None:
    direct = direct_checks[requirements]
    sse_only, json_answered = SSE_ONLY[requirements], JSON_ANSWERED[requirements]
    flags = ["--handshake-only"] if downstream == "handshake only" else []
    # No approval questions: mcpmanager asks before a tool that reads as destructive (`confirm_delete`)
    # by default, a question of its own that the suite, answering only the server's, never answers.
    proxy = {"askBefore": "never"}
    config = write_config(tmp_path / "cfg", {"conformance": conformance_fixture(*flags)}, supervisor=FAST, proxy=proxy)
    async with serving_http(config, tmp_path / "home", mode="direct") as served:
        through = await run_suite(f"{served.url}/direct", tmp_path / "direct", requirements, served.token)
        discovery = await run_suite(f"{served.url}/discovery", tmp_path / "discovery", requirements, served.token)
        async with http_client(f"{served.url}/direct", served.token) as client:
            listed = (await client.list_tools()).tools
        async with http_client(f"{served.url}/discovery", served.token) as client:
            in_discovery = (await client.list_tools()).tools
    label = f"conformance {requirements}, {downstream}"
    print(f"\n{label}: direct {summary(direct)}; through mcpmanager {summary(through)}")
    print(f"{label}: discovery mode {summary(discovery)}")

    assert direct.keys() >= sse_only, "the fixture no longer answers with SSE: the exception is stale"
    assert all(direct[key].status != "FAILURE" for key in sse_only)  # nothing failing was hidden
    differing = {
        key: (direct[key].status if key in direct else "-", c.status, c.error)
        for key, c in through.items()
        if json_answered.get(key, direct[key].status if key in direct else "-") != c.status
        and not named(requirements, downstream, key)
    }
    unreported = {
        key
        for key in ((direct.keys() - sse_only) | json_answered.keys()) - through.keys()
        if not named(requirements, downstream, key)
    }
    assert not differing and not unreported, (differing, sorted(unreported))
    # What is named by design still happens as named (else the exception is stale).
    design = {key: (through[key].status if key in through else None) for key in BY_DESIGN[requirements]}
    assert design == BY_DESIGN[requirements], design

    # Discovery: a failure only for want of a listed tool; everything else as directly.
    excused = {
        key
        for key, c in discovery.items()
        if c.status in ("FAILURE", "WARNING") and for_want_of_listing(c, listed, in_discovery)
    }
    others = {
        key: (direct[key].status if key in direct else "-", c.status, c.error)
        for key, c in discovery.items()
        if key not in excused
        and json_answered.get(key, direct[key].status if key in direct else "-") != c.status
        and not named(requirements, downstream, key)
    }
    assert not others, others
    # Every scenario ran (a failed check may end its scenario early, so only scenarios are compared).
    assert {c.scenario for c in discovery.values()} == {c.scenario for c in direct.values()}
