"""The endpoint's paths (`serve/routes.py`), served by `serve_http` and spoken to over real HTTP: each
mode's path with or without a trailing slash, the front end's controls (POST only), 404 for the
rest, and the guard before all of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import httpx2

from mcpmanager.core.serve.http import serve_http
from tests.e2e.test_fast_lane import engine_with
from tests.e2e.test_wire_lane import HELLO as OPENING
from tests.helpers.engines import wait_for
from tests.helpers.piped import TOKEN

HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPENING}
ACCEPT = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}


@asynccontextmanager
async def endpoint(tmp_path: Path, shown: list[dict[str, str]]) -> AsyncIterator[str]:
    """The endpoint's base URL (http://127.0.0.1:N), with a `show` control recording its calls."""
    urls: list[str] = []

    def show(server: str = "") -> None:
        shown.append({"server": server})

    controls = {"show": show}
    async with engine_with(tmp_path, {}) as engine, anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, engine.router, 0, urls.append, token=TOKEN, controls=controls))
        await wait_for(lambda: bool(urls), 10)
        yield urls[0].removesuffix("/mcp")
        tg.cancel_scope.cancel()


async def test_each_mode_answers_with_or_without_a_trailing_slash(tmp_path: Path) -> None:
    async with endpoint(tmp_path, []) as base, httpx2.AsyncClient(timeout=30) as http:
        for path in ("/mcp", "/mcp/", "/mcp/direct", "/mcp/discovery/"):
            opened = await http.post(base + path, json=HELLO, headers=ACCEPT)
            assert opened.status_code == 200, path
            assert '"serverInfo":{"name":"mcpmanager"' in opened.text, path  # (an SSE event: the SDK answers it)
            assert opened.headers["mcp-session-id"]


async def test_a_control_runs_on_post_only_with_the_parameters_it_takes(tmp_path: Path) -> None:
    shown: list[dict[str, str]] = []
    async with endpoint(tmp_path, shown) as base, httpx2.AsyncClient(timeout=30) as http:
        asked = await http.post(base + "/control/show?server=a", headers=ACCEPT)
        assert (asked.status_code, asked.text) == (200, "ok\n")
        assert shown == [{"server": "a"}]
        got = await http.get(base + "/control/show", headers=ACCEPT)
        assert got.status_code == 405 and got.headers["allow"] == "POST"
        rejected = await http.post(base + "/control/show?bogus=1", headers=ACCEPT)
        assert (rejected.status_code, rejected.text) == (400, "unexpected parameters\n")
        assert shown == [{"server": "a"}]


async def test_other_paths_are_not_found_and_the_guard_comes_first(tmp_path: Path) -> None:
    async with endpoint(tmp_path, []) as base, httpx2.AsyncClient(timeout=30) as http:
        missing = await http.post(base + "/mcp/nowhere", json=HELLO, headers=ACCEPT)
        assert (missing.status_code, missing.text) == (404, "Not Found")
        assert (await http.get(base + "/control", headers=ACCEPT)).status_code == 404
        # Without the token nothing is told, not even whether the path exists.
        for path in ("/mcp", "/mcp/nowhere", "/control/show"):
            assert (await http.post(base + path, json=HELLO)).status_code == 401, path
