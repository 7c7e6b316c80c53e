"""`mcpmanager serve --stdio --mode direct` in front of real subprocess servers, driven by a real
SDK client in both protocol eras."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.helpers.clients import Notes, serve_client, text_of
from tests.helpers.engines import pid_alive, wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config

ERAS = ["legacy", "auto"]


def status(home: Path) -> dict[str, dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "status", "--json"],
        env={"MCPMANAGER_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    [engine] = json.loads(out.stdout)["engines"]
    return engine["servers"]  # type: ignore[no-any-return]


async def names(client) -> set[str]:  # type: ignore[no-untyped-def]
    return {t.name for t in (await client.list_tools()).tools}


async def has(client, wanted: set[str]) -> bool:  # type: ignore[no-untyped-def]
    return wanted <= await names(client)


@pytest.mark.parametrize("era", ERAS)
async def test_direct_mode_routes_calls_and_reports_broken_servers(tmp_path: Path, home: Path, era: str) -> None:
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps([{"name": "only_in_a", "description": "unique", "inputSchema": {"type": "object"}}]))
    config = write_config(
        tmp_path,
        {
            "a": fixture("--name", "a", "--tools-file", str(extra)),
            "b": fixture("--name", "b"),
            "missing": {"command": "definitely-not-a-command-mcpm"},
            "exits": fixture("--exit-at-start", "3"),
        },
        supervisor=FAST,
    )
    notes = Notes()
    async with serve_client(config, home, era, notes=notes) as client:
        # Nothing is cached on a first run: tools appear as servers come up, announced by list_changed.
        await wait_for(lambda: has(client, {"a__echo", "b__echo", "only_in_a"}), timeout=30)
        listed = await names(client)
        assert {"a__echo", "b__echo", "a__add", "b__add", "only_in_a"} <= listed
        assert "echo" not in listed  # clashing names are never exposed bare
        assert all(len(n) <= 64 and n.replace("_", "").replace("-", "").isalnum() for n in listed)

        result = await client.call_tool("a__echo", {"text": "hello"})
        assert not result.is_error
        assert text_of(result) == "hello"
        assert result.structured_content == {"text": "hello"}
        whoami = text_of(await client.call_tool("b__whoami", {}))
        assert "b" in whoami

        failing = await client.call_tool("a__fail", {"message": "nope"})
        assert failing.is_error and "nope" in text_of(failing)

        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and "Unknown tool 'no_such_tool'" in text_of(unknown)

        await wait_for(lambda: status(home)["missing"]["state"] == "failed", timeout=20)
        servers = status(home)
        assert servers["missing"]["reason"] == "command not found: definitely-not-a-command-mcpm"
        await wait_for(lambda: status(home)["exits"]["state"] == "failed", timeout=30)
        assert "exited 3" in str(status(home)["exits"]["reason"])
        assert "fatal: cannot start" in str(status(home)["exits"]["reason"])
        assert status(home)["a"]["state"] == "ready"
        if era == "legacy":
            assert notes.count >= 1


@pytest.mark.parametrize("era", ERAS)
async def test_crashed_server_call_is_an_error_with_stderr_then_it_comes_back(
    tmp_path: Path, home: Path, era: str
) -> None:
    config = write_config(tmp_path, {"crashy": fixture("--crash-after", "2")}, supervisor=FAST)
    async with serve_client(config, home, era) as client:
        await wait_for(lambda: names(client), timeout=30)
        assert not (await client.call_tool("echo", {"text": "1"})).is_error
        second = await client.call_tool("echo", {"text": "2"})
        assert second.is_error
        text = text_of(second)
        assert "crashy" in text
        assert "fatal: crashing after 2 calls" in text
        # It comes back on its own after the backoff, and serves again.
        await wait_for(lambda: _restarted(home), timeout=20)
        again = await client.call_tool("echo", {"text": "3"})
        assert text_of(again) == "3"
        assert status(home)["crashy"]["restarts"] == 1


def _restarted(home: Path) -> bool:
    crashy = status(home)["crashy"]
    return crashy["state"] == "ready" and crashy["restarts"] == 1


async def test_progress_is_forwarded_and_cancellation_reaches_the_server(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, {"p": fixture()}, supervisor=FAST)
    async with serve_client(config, home, "legacy") as client:
        await wait_for(lambda: names(client), timeout=30)
        seen: list[tuple[float, float | None, str | None]] = []

        # The parameter names are those of the SDK's ProgressFnT protocol, which may pass them by keyword.
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        result = await client.call_tool("slow", {"seconds": 0.3, "steps": 3}, progress_callback=on_progress)
        assert text_of(result) == "done"
        assert [v for v, _, _ in seen] == [1, 2, 3]

        with anyio.move_on_after(1.5):
            await client.call_tool("sleep", {"seconds": 30})
        log = home / "logs" / "p.log"
        await wait_for(lambda: "cancelled sleep" in log.read_text(), timeout=10)


@pytest.mark.parametrize("era", ERAS)
async def test_tool_list_changes_reach_the_client(tmp_path: Path, home: Path, era: str) -> None:
    config = write_config(tmp_path, {"dyn": fixture("--changing-tools")}, supervisor=FAST)
    notes = Notes()
    async with serve_client(config, home, era, notes=notes) as client:
        await wait_for(lambda: names(client), timeout=30)
        if era == "legacy":
            before = notes.count
            await client.call_tool("add_tool", {"name": "brand_new"})
            await wait_for(lambda: notes.count > before, timeout=10)
            assert "brand_new" in await names(client)
        else:
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("add_tool", {"name": "brand_new"})
                with anyio.fail_after(10):
                    async for _ in subscription:
                        break
            assert "brand_new" in await names(client)
        assert text_of(await client.call_tool("brand_new", {"x": 1})) != ""


async def test_catalogue_cache_answers_before_servers_are_up(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, {"slowpoke": fixture("--start-delay", "4")}, supervisor=FAST)
    async with serve_client(config, home) as client:
        await wait_for(lambda: names(client), timeout=30)
    # Second run: the cached catalogue is listed at once, while the server is still starting.
    async with serve_client(config, home) as client:
        assert "echo" in await names(client)
        assert status(home)["slowpoke"]["state"] == "starting"
        # A call to a starting server waits for it (bounded) instead of failing.
        assert text_of(await client.call_tool("echo", {"text": "waited"})) == "waited"


async def test_stop_leaves_no_process_behind(tmp_path: Path, home: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    config = write_config(tmp_path, {"family": fixture("--grandchild", str(pidfile))}, supervisor=FAST)
    async with serve_client(config, home) as client:
        await wait_for(lambda: names(client), timeout=30)
        child_pid = int(text_of(await client.call_tool("whoami", {})).split()[-1])
        await wait_for(pidfile.exists, timeout=10)
        grandchild = int(pidfile.read_text())
        assert pid_alive(child_pid) and pid_alive(grandchild)
    await wait_for(lambda: not pid_alive(child_pid) and not pid_alive(grandchild), timeout=15)


async def test_a_server_that_hangs_at_initialize_times_out_and_disturbs_nothing(tmp_path: Path, home: Path) -> None:
    config = write_config(
        tmp_path,
        {"hang": fixture("--hang-at-init", startTimeout=1), "ok": fixture()},
        supervisor=FAST,
    )
    async with serve_client(config, home) as client:
        await wait_for(lambda: names(client), timeout=30)
        assert text_of(await client.call_tool("echo", {"text": "fine"})) == "fine"
        await wait_for(lambda: "handshake timed out after 1 s" in str(status(home)["hang"]["reason"]), timeout=20)
