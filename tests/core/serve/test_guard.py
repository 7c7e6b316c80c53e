"""The guard as ASGI: Host, then Origin, then the token; /healthz before all of them."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import pytest

from mcpmanager.core.proxy.activity import CALLER_KEY
from mcpmanager.core.serve.guard import Admission, Guard, local_admission

Answer = tuple[int, bytes, dict[str, Any]]


async def request(guard: Guard, path: str, headers: dict[str, str]) -> Answer:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope: dict[str, Any] = {
        "type": "http",
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    await guard(scope, receive, send)
    return sent[0]["status"], sent[-1].get("body", b""), scope


async def app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"served"})


team = Admission(frozenset({"127.0.0.1", "gw.example"}), {"a-token": "alice"}.get, "ask for a token", "not this host")


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "gw.example:8443", "Authorization": "Bearer a-token"}, 200),
        ({"Host": "GW.EXAMPLE", "Authorization": "bearer a-token"}, 200),
        ({"Host": "evil.example", "Authorization": "Bearer a-token"}, 421),
        ({"Authorization": "Bearer a-token"}, 421),
        ({"Host": "gw.example", "Origin": "https://evil.example", "Authorization": "Bearer a-token"}, 403),
        ({"Host": "gw.example", "Origin": "https://gw.example", "Authorization": "Bearer a-token"}, 200),
        ({"Host": "gw.example", "Authorization": "Bearer other"}, 401),
        ({"Host": "gw.example", "Authorization": "Basic a-token"}, 401),
        ({"Host": "gw.example"}, 401),
    ],
)
async def test_host_origin_then_token(headers: dict[str, str], status: int) -> None:
    got, body, scope = await request(Guard(app, team), "/mcp", headers)
    assert got == status, body
    if status == 200:
        assert scope["state"][CALLER_KEY] == "alice"
    if status == 401:
        assert body == b"ask for a token\n"


async def test_healthz_is_answered_first_and_reveals_nothing() -> None:
    got, body, _ = await request(Guard(app, team), "/healthz", {"Host": "10.9.8.7:8443"})
    assert (got, body) == (200, b"ok\n")


async def test_the_local_guard_keeps_its_messages() -> None:
    guard = Guard(app, local_admission("t0ken"))
    got, body, _ = await request(guard, "/mcp", {"Host": "gw.example", "Authorization": "Bearer t0ken"})
    assert (got, body) == (421, b"mcpmanager answers only requests sent to 127.0.0.1 or localhost\n")
    got, body, scope = await request(guard, "/mcp", {"Host": "localhost:1", "Authorization": "Bearer t0ken"})
    assert got == 200
    assert CALLER_KEY not in scope.get("state", {})  # one user's machine: no names to record


async def test_a_websocket_is_closed_unheard() -> None:
    sent: list[MutableMapping[str, Any]] = []
    called: list[bool] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        called.append(True)

    await Guard(inner, team)({"type": "websocket", "path": "/mcp", "headers": []}, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}] and not called
