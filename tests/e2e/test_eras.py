"""Which era the engine speaks to its stdio servers, seen from outside: a dual-era server (every
SDK 2.x server) gets the handshake; a server of the 2026-07-28 era alone refuses it, is started again
at once with the probe in the same start (no crash, no backoff), and later engines probe it directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.helpers.clients import http_client
from tests.helpers.engines import engines, wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http

REFUSED = "refusing initialize"  # what the 2026-07-28-only fixture writes when it refuses


def servers(home: Path) -> dict[str, Any]:
    found = engines(home)
    return found[0]["servers"] if found else {}


def both_ready(home: Path) -> bool:
    listed = servers(home)
    return all(listed.get(name, {}).get("state") == "ready" for name in ("dual", "modern"))


async def test_stdio_servers_get_the_handshake_unless_they_refuse_it(tmp_path: Path) -> None:
    entries = {"dual": fixture("--name", "dual"), "modern": fixture("--name", "modern", "--modern-only")}
    config = write_config(tmp_path / "cfg", entries, supervisor=FAST)
    home = tmp_path / "home"
    log = home / "logs" / "modern.log"
    for start in range(2):
        before = log.read_text().count(REFUSED) if log.exists() else 0
        async with serving_http(config, home) as served, http_client(served.url, served.token) as client:
            await wait_for(lambda: both_ready(home), timeout=30)
            listed = servers(home)
            assert listed["dual"]["protocol"] not in MODERN_PROTOCOL_VERSIONS, listed["dual"]
            assert listed["modern"]["protocol"] in MODERN_PROTOCOL_VERSIONS, listed["modern"]
            assert listed["modern"]["restarts"] == 0, listed["modern"]  # refused, then probed: one start
            for name in ("dual", "modern"):
                result = await client.call_tool(f"{name}__echo", {"text": f"start {start}"})
                assert not result.is_error and result.content[0].text == f"start {start}", result  # type: ignore[union-attr]
        refusals = log.read_text().count(REFUSED) - before
        # The first start sends the handshake and is refused once; the next goes straight to the probe.
        assert refusals == (1 if start == 0 else 0), log.read_text()
    assert "starting it again with server/discover" in log.read_text()
