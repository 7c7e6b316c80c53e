"""OAuth sign-in end to end: `mcpmanager serve --http` reaches a protected server (the SDK's
authorization server and MCP server, on loopback, as a subprocess); `mcpmanager login` signs in
through a scripted user agent named in $BROWSER (or prints the address when no browser opens); the
running engine connects again; an expired token is refreshed with no browser step; `logout` signs
out; and no token is in any file under MCPMANAGER_HOME while the keyring holds them."""

from __future__ import annotations

import base64
import configparser
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.text import TextReceiveStream

from tests.helpers.clients import http_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, write_config
from tests.helpers.oauth_server import browser_script, follow, protected_server
from tests.helpers.serving import serving_http
from tests.helpers.vaults import current_keyring_env, keyring_file


def env(home: Path, browser: Path) -> dict[str, str]:
    """A user's terminal with no display: only $BROWSER can show a page."""
    return {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", ""), "BROWSER": str(browser)} | (
        current_keyring_env()
    )


async def mcpmanager(home: Path, browser: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return await anyio.run_process([sys.executable, "-m", "mcpmanager", *args], env=env(home, browser), check=False)


async def server_status(home: Path, browser: Path) -> dict[str, Any]:
    done = await mcpmanager(home, browser, "status", "--json")
    found: dict[str, Any] = json.loads(done.stdout)["engines"][0]["servers"]["notes"]
    return found


def files_holding(home: Path, texts: list[str]) -> list[str]:
    forms = [form for text in texts for form in (text.encode(), base64.b64encode(text.encode()))]
    found = []
    for path in home.rglob("*"):
        try:
            data = path.read_bytes()
        except (IsADirectoryError, FileNotFoundError):
            continue
        found += [str(path.relative_to(home))] if any(form in data for form in forms) else []
    return found


def keyring_text(folder: Path) -> str:
    """Every value in the private keyring file, decoded (keyrings.alt keeps them in base64)."""
    parser = configparser.RawConfigParser()
    parser.read(keyring_file(folder))
    return "\n".join(base64.b64decode(v).decode() for s in parser.sections() for _, v in parser.items(s))


async def test_login_refresh_and_logout_through_a_running_engine(
    home: Path, tmp_path: Path, private_keyring: Path
) -> None:
    agent = browser_script(tmp_path)
    async with protected_server(token_lifetime=2) as server:
        write_config(home, {"notes": {"type": "http", "url": f"{server.base}/mcp"}}, supervisor=FAST)
        async with serving_http(home / "config.json", home) as served, http_client(served.url, served.token) as client:

            async def state() -> str:
                return str((await server_status(home, agent))["state"])

            await wait_for(lambda: _is(state, "needs-sign-in"), timeout=30)
            status = await server_status(home, agent)
            assert "mcpmanager login notes" in status["reason"] and status["retry_in"] is None
            refused = await client.call_tool("whoami", {})
            assert refused.is_error and "mcpmanager login notes" in text_of(refused)

            login = await mcpmanager(home, agent, "login", "notes")
            assert login.returncode == 0, login.stderr
            assert b"signed in to 'notes'" in login.stdout and b"connects 'notes' again" in login.stderr
            await wait_for(lambda: _is(state, "ready"), timeout=30)
            assert text_of(await client.call_tool("whoami", {})) == "signed in"

            # The access token lives 2 s: past it, the next call is answered after a refresh.
            time_of_expiry = time.time() + 2.5
            await wait_for(lambda: time.time() > time_of_expiry, timeout=10)
            assert text_of(await client.call_tool("whoami", {})) == "signed in"
            counters = await server.counters()
            assert counters["refreshes"] >= 1 and counters["authorizations"] == 1
            assert len((tmp_path / "visits").read_text().splitlines()) == 1  # one browser step in all
            held = keyring_text(private_keyring)
            assert counters["issued"][-1] in held and counters["issued"][-2] in held  # the live pair

            logout = await mcpmanager(home, agent, "logout", "notes")
            assert logout.returncode == 0 and b"revoked" in logout.stdout, logout.stderr
            await wait_for(lambda: _is(state, "needs-sign-in"), timeout=30)
            refused = await client.call_tool("whoami", {})
            assert refused.is_error and "mcpmanager login notes" in text_of(refused)
        issued = (await server.counters())["issued"]
    assert len(issued) >= 4
    assert files_holding(home, issued) == []  # config, logs, caches, the engine's own stderr: none
    assert not any(token in keyring_text(private_keyring) for token in issued)  # signed out: forgotten


async def test_login_prints_the_address_when_no_browser_opens(home: Path, tmp_path: Path) -> None:
    nothing = browser_script(tmp_path, works=False)
    async with protected_server() as server:
        write_config(home, {"notes": {"url": f"{server.base}/mcp"}})
        command = [sys.executable, "-m", "mcpmanager", "login", "notes"]
        async with await anyio.open_process(command, env=env(home, nothing)) as login:
            assert login.stderr is not None
            said = ""
            async for chunk in TextReceiveStream(login.stderr):
                said += chunk
                if "waiting for the sign-in" in said:
                    break
            assert "no browser could be opened here" in said
            [url] = [line.strip() for line in said.splitlines() if line.strip().startswith("http://")]
            await follow(url)  # the user opens it somewhere else
            assert await login.wait() == 0
        assert (await server.counters())["code_exchanges"] == 1


async def _is(state: Any, wanted: str) -> bool:
    return bool(await state() == wanted)
